package zookeeper_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/namecast/namecast/internal/testutil"
)

// requireHostTools reports whether a missing host tool fails the test
// (CI sets NAMECAST_INTEROP=require) rather than skipping it.
func requireHostTools() bool { return os.Getenv("NAMECAST_INTEROP") == "require" }

// needHost skips (or, under NAMECAST_INTEROP=require, fails) t when err
// says a host tool is missing; what names the package that provides it.
func needHost(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if requireHostTools() {
		t.Fatalf("%s is required (NAMECAST_INTEROP=require): %v", what, err)
	}
	t.Skipf("%s not available (install it, or set NAMECAST_INTEROP=require to fail instead): %v", what, err)
}

// needFile is needHost for a file a Debian package installs.
func needFile(t testing.TB, what, path string) {
	t.Helper()
	_, err := os.Stat(path)
	needHost(t, what, err)
}

// lookPath finds an executable, needHost'ing when it is absent.
func lookPath(t testing.TB, what, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	needHost(t, what, err)
	return p
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TestMain removes what the package compiled once for all its tests. The
// interop tests run four at a time: each mostly waits (a JVM's start, a
// session's timeout), and go test's default of GOMAXPROCS at a time would
// leave those waits end to end on two cores.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		runProviderProcess(spec) // figures_kill_test.go: this process is a provider to be killed
	}
	testutil.DefaultParallel(4)
	code := m.Run()
	if curatorDir != "" {
		os.RemoveAll(curatorDir)
	}
	os.Exit(code)
}
