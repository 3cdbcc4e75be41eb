package lease

import (
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
	b[12] ^= 0xff
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
	a.leases.log.close()
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
