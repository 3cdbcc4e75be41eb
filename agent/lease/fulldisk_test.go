package lease

import (
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// With a disk that refuses writes, a registration's lease is not saved
// and says so (the door answers an error and applies nothing), and a
// withdrawal's removal is not saved and says so (the lease stays, the door
// withdraws nothing); once the disk takes writes again, the removal is
// saved and a restart never brings the withdrawn registration back.
// Before, DropLease forgot the saved entry whether or not the append
// worked, so the withdrawn lease stayed in the files for good and came
// back at every restart (issue 24, item 1: 11 deleted URLs served again),
// and PutLease reported nothing.
func TestFullDiskNeverResurrectsAWithdrawal(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	heal := a.leases.FailWritesForTest()

	c := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "c", Addr: "10.0.0.3:1"}}
	if _, err := a.leases.Hold(Lease{Door: "test", ID: "c", Keys: []string{c.Key()}}, []routes.Record{c}); err == nil {
		t.Fatal("a lease was reported held on a disk that refuses writes")
	}
	if err := a.leases.DropLease("test", "a"); err == nil {
		t.Fatal("a lease's removal was reported saved on a disk that refuses writes")
	}
	a.leases.mu.Lock()
	_, kept := a.leases.m[leaseKey("test", "a")]
	a.leases.mu.Unlock()
	if !kept {
		t.Fatal("a lease whose removal was not saved was forgotten")
	}

	heal()
	if err := a.leases.DropLease("test", "a"); err != nil {
		t.Fatalf("removal once the disk takes writes: %v", err)
	}
	if got, want := restored(t, dir), []string{"b=10.0.0.2:1"}; !slices.Equal(got, want) {
		t.Fatalf("a restart restores %v, want %v", got, want)
	}
}
