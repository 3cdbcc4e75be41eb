package lease

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A damaged log entry after a snapshot follows the same rule as one
// mid-log: a removal written after the damage still removes (the
// withdrawn registration never comes back, whether the snapshot or an
// entry before the damage held it), and the leases the snapshot holds
// count as written before the damage, so a destroyed removal or change
// of one of them leaves it out rather than bringing it back as it was.
func TestDamagedLeaseEntryAfterASnapshot(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ops     func(a *testAgent)
		garble  int // which log entry, from 0
		restore []string
	}{
		{"a removal after the damage, of a lease the snapshot holds", func(a *testAgent) {
			putBroker(a, "c", "10.0.0.3:1", time.Time{})
			dropBroker(a, "a")
			putBroker(a, "d", "10.0.0.4:1", time.Time{})
		}, 0, []string{"d=10.0.0.4:1"}},
		{"a removal after the damage, of a lease put before it", func(a *testAgent) {
			putBroker(a, "c", "10.0.0.3:1", time.Time{})
			putBroker(a, "d", "10.0.0.4:1", time.Time{})
			dropBroker(a, "c")
			putBroker(a, "e", "10.0.0.5:1", time.Time{})
		}, 1, []string{"e=10.0.0.5:1"}},
		{"a destroyed removal of a lease the snapshot holds", func(a *testAgent) {
			dropBroker(a, "a")
			putBroker(a, "c", "10.0.0.3:1", time.Time{})
		}, 0, []string{"c=10.0.0.3:1"}},
		{"a destroyed change of a lease the snapshot holds", func(a *testAgent) {
			putBroker(a, "a", "10.0.0.1:2", time.Time{})
			putBroker(a, "c", "10.0.0.3:1", time.Time{})
		}, 0, []string{"c=10.0.0.3:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := leaseAgent(t, dir)
			putBroker(a, "a", "10.0.0.1:1", time.Time{})
			putBroker(a, "b", "10.0.0.2:1", time.Time{})
			a.leases.log.Close()
			a = leaseAgent(t, dir) // the restart folds a and b into leases.json
			tc.ops(a)
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
