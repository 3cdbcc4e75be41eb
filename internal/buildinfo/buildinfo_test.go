package buildinfo

import (
	"runtime"
	"testing"
)

// A test binary is a plain build: no stamped version, so "devel", and a
// revision that is never empty.
func TestUnstamped(t *testing.T) {
	if v := Version(); v != "devel" {
		t.Errorf("Version() = %q in a plain build, want devel", v)
	}
	if Revision() == "" {
		t.Error("Revision() is empty; want a commit or unknown")
	}
	if GoVersion() != runtime.Version() {
		t.Errorf("GoVersion() = %q", GoVersion())
	}
}
