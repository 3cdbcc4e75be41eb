package lease

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/sealed"
)

// The first start after a reboot whose snapshot the disk refused keeps
// the previous boot's leases.json; the leases made in this boot, with a
// deadline (a session, a broker, a TTL), are in the log after it, and
// the next restart in the same boot restores them. Before, the whole
// log was judged by the snapshot's boot: the restart took this boot's
// sessions for the previous boot's and dropped them, acknowledged as
// they were.
func TestLeasesOfThisBootAfterASnapshotOfAnotherAreRestored(t *testing.T) {
	if bootID() == "" {
		t.Skip("the kernel does not say its boot id")
	}
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "before", "10.0.0.1:1", time.Now().Add(time.Hour))
	a.leases.Freeze(false)
	path := filepath.Join(dir, leasesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(replaceOnce(t, string(b), `"boot":"`+bootID()+`"`, `"boot":"00000000-0000-0000-0000-000000000000"`))
	old := sealed.Seal(append([]byte("{"), b[len(`{"crc32c":"12345678",`):]...)) // as that boot sealed it
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}

	a = leaseAgent(t, dir) // the first start after the reboot
	if got := a.leases.Leases(); len(got) != 0 {
		t.Fatalf("the first start after a reboot restored %v", got)
	}
	// Its snapshot failed (a full disk): the previous boot's is still
	// there, with the log empty after it as it was, and the store knows
	// no snapshot of this boot was written.
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	a.leases.saveMu.Lock()
	a.leases.booted = false
	a.leases.saveMu.Unlock()
	putBroker(a, "after", "10.0.0.2:1", time.Now().Add(time.Hour))
	a.leases.log.Close()

	a = leaseAgent(t, dir) // a restart in the same boot
	var got []string
	for _, l := range a.leases.Leases() {
		got = append(got, l.ID)
	}
	if !slices.Equal(got, []string{"after"}) {
		t.Fatalf("a restart in the same boot restored %v, want the lease made in it", got)
	}
}
