package lease

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Recovery judges each file on its own: a damaged leases.json does not
// throw away an intact leases.log (before, both were set aside together
// and the log's registrations lost), a damaged entry mid-log does not cut
// off the entries after it (before, replay ended there for good), and
// set-aside copies never overwrite each other (before, each restart
// overwrote leases.json.corrupt).
func TestDamagedLeaseFilesLoseOnlyWhatIsDamaged(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir) // Restore compacted: the log starts empty
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	putBroker(a, "c", "10.0.0.3:1", time.Time{})
	logPath := filepath.Join(dir, leaseLogFile)
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Damage the first entry's body (b's and c's follow it).
	b[entryOffsets(b)[0]+12] ^= 0xff
	if err := os.WriteFile(logPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{leasesFile, leasesFile + ".corrupt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := restored(t, dir), []string{"b=10.0.0.2:1", "c=10.0.0.3:1"}; !slices.Equal(got, want) {
		t.Fatalf("restores %v, want %v", got, want)
	}
	a.leases.log.Close()
	leaseAgent(t, dir) // a restart: sets the damaged files aside
	for _, name := range []string{leasesFile + ".corrupt", leasesFile + ".corrupt.1", leaseLogFile + ".corrupt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("set-aside copy: %v", err)
		}
	}
	if got, want := restored(t, dir), []string{"b=10.0.0.2:1", "c=10.0.0.3:1"}; !slices.Equal(got, want) {
		t.Fatalf("after the restart the files restore %v, want %v", got, want)
	}
}

// A damaged entry mid-log may have been any lease's change or removal,
// so no lease last written before it is restored as it was: a removal
// destroyed would bring the lease back (a withdrawn registration served
// again), a change destroyed would bring its old records back. Such
// leases are lost, as the entry was; the ones written after it stay.
// Before, both came back (the crash test saw a withdrawn ephemeral znode
// served again, and a setData rolled back, after one garbled entry).
func TestDamagedLeaseEntryNeverBringsBackWhatItChanged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		garble  int // which entry, from 0
		restore []string
	}{
		{"a destroyed removal", 2, []string{"b=10.0.0.2:2", "c=10.0.0.3:1"}},
		{"a destroyed change", 3, []string{"c=10.0.0.3:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := leaseAgent(t, dir)
			putBroker(a, "a", "10.0.0.1:1", time.Time{})
			putBroker(a, "b", "10.0.0.2:1", time.Time{})
			dropBroker(a, "a")
			putBroker(a, "b", "10.0.0.2:2", time.Time{})
			putBroker(a, "c", "10.0.0.3:1", time.Time{})
			logPath := filepath.Join(dir, leaseLogFile)
			b, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			b[entryOffsets(b)[tc.garble]+12] ^= 0xff
			if err := os.WriteFile(logPath, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if got := restored(t, dir); !slices.Equal(got, tc.restore) {
				t.Fatalf("restores %v, want %v", got, tc.restore)
			}
		})
	}
}

// Damage that leaves leases.json valid JSON is found too (the file is
// sealed with a checksum): a changed digit of its seq made the restore
// skip the log entries after it and serve the snapshot's old records,
// and a changed byte of a record served a registration no client made.
// Now the snapshot is set aside, and the log after it still restores.
func TestLeaseSnapshotDamageThatStaysJSONIsFound(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
	}{
		{"its seq", `"seq":`, `"seq":9`},
		{"a record", `10.0.0.1:1`, `10.0.0.1:9`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := leaseAgent(t, dir)
			putBroker(a, "a", "10.0.0.1:1", time.Time{})
			putBroker(a, "b", "10.0.0.2:1", time.Time{})
			a.leases.log.Close()
			a = leaseAgent(t, dir) // the restart folds the log into leases.json
			putBroker(a, "b", "10.0.0.2:2", time.Time{})
			path := filepath.Join(dir, leasesFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := bytes.Replace(b, []byte(tc.from), []byte(tc.to), 1)
			if bytes.Equal(damaged, b) {
				t.Fatalf("%s not in %s", tc.from, b)
			}
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			if got, want := restored(t, dir), []string{"b=10.0.0.2:2"}; !slices.Equal(got, want) {
				t.Fatalf("restores %v, want %v (a was only in the damaged snapshot)", got, want)
			}
		})
	}
}
