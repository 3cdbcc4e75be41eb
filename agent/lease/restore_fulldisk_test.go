package lease

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/atomicfile"
)

// A restart whose snapshot cannot be written (a full disk) still knows
// which leases the files hold, so withdrawing a restored one writes its
// removal before it is acknowledged. Before, the store learnt what the
// files hold only from the snapshot Restore writes: with that snapshot
// refused, the removal of a restored lease wrote nothing and was
// acknowledged, and the next restart brought the registration back (the
// crash test saw an HTTP registration served again after its
// acknowledged DELETE and a kill -9).
func TestWithdrawalAfterARestartThatCouldNotSnapshotIsSaved(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	a.leases.log.Close()

	real := atomicfile.SyncDir
	atomicfile.SyncDir = func(string) error { return errors.New("no space left on device") }
	a = leaseAgent(t, dir) // the restart's snapshot fails
	atomicfile.SyncDir = real
	if got, want := a.leases.Leases(), 2; len(got) != want {
		t.Fatalf("restored %d leases, want %d", len(got), want)
	}

	if err := a.leases.DropLease("test", "a"); err != nil {
		t.Fatal(err)
	}
	if got, want := restored(t, dir), []string{"b=10.0.0.2:1"}; !slices.Equal(got, want) {
		t.Fatalf("after the acknowledged removal of a, a restart restores %v, want %v", got, want)
	}
}
