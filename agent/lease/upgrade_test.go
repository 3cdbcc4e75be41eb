package lease

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/namecast/namecast/internal/atomicfile"
)

// A data dir whose lease files an agent of release 0.1.0 wrote
// (testdata/leases-0.1.0, written by that release's code: a and b in
// leases.json, then a changed, b dropped and c put in leases.log, frames
// of a JSON body) restores what they hold, and its log is rewritten once
// in package wal's format (also when the snapshot a restart writes
// cannot be: the log alone then says it all).
func TestLeaseFilesOfReleaseZeroOneAreReadAndRewritten(t *testing.T) {
	want := []string{"a=10.0.0.9:1", "c=10.0.0.3:1"}
	for _, snapshotFails := range []bool{false, true} {
		dir := t.TempDir()
		for _, n := range []string{leasesFile, leaseLogFile} {
			b, err := os.ReadFile(filepath.Join("testdata", "leases-0.1.0", n))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := restored(t, dir); !slices.Equal(got, want) {
			t.Fatalf("the files of 0.1.0 restore %v, want %v", got, want)
		}
		if snapshotFails {
			// The snapshot the restart writes is not known to be on
			// disk (its directory's fsync fails): the log stays.
			realDir := atomicfile.SyncDir
			atomicfile.SyncDir = func(string) error { return errors.New("input/output error") }
			t.Cleanup(func() { atomicfile.SyncDir = realDir })
		}
		a := leaseAgent(t, dir)
		var got []string
		for _, r := range a.table.LocalRecords("") {
			got = append(got, r.Broker.Name+"="+r.Broker.Addr)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("restarted on them, the agent holds %v, want %v", got, want)
		}
		if snapshotFails && a.leases.log.Last() != 5 {
			t.Fatalf("the log numbers on from %d, want 5 (the last entry of 0.1.0's log)", a.leases.log.Last())
		}
		a.leases.log.Close()
		b, err := os.ReadFile(filepath.Join(dir, leaseLogFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 9 || b[8] == '{' {
			t.Fatalf("leases.log is not in package wal's format: %q", b)
		}
		if got := restored(t, dir); !slices.Equal(got, want) {
			t.Fatalf("rewritten, the files restore %v, want %v", got, want)
		}
	}
}
