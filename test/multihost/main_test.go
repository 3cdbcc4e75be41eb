package multihost

import (
	"os"
	"testing"

	"github.com/namecast/namecast/internal/testutil"
)

// TestMain runs every test of the package at once: each waits on its own
// lab's agents (formation, failure detection, a partition's heal) and
// computes little, so go test's default of GOMAXPROCS at a time would
// leave the waits end to end.
func TestMain(m *testing.M) {
	testutil.DefaultParallel(8)
	os.Exit(m.Run())
}
