package host

import (
	"sync"
	"testing"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// A door's withdrawal leaves a record another door's lease still holds,
// and takes one only its own leases held.
func TestWithdrawalLeavesWhatAnotherDoorHolds(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1)})
	zk, web := h.For("zookeeper"), h.For("http")
	u := routes.Record{URL: &routes.URL{Interface: "I", Category: "providers", URL: "dubbo://10.0.0.1:1/I"}}
	key := u.Key()
	for door, host := range map[string]Host{"zookeeper": zk, "http": web} {
		host.Apply([]routes.Record{u}, nil)
		if err := host.PutLease(lease.Lease{Door: door, ID: door + "-holder", Keys: []string{key}}); err != nil {
			t.Fatal(err)
		}
	}
	held := func() bool { _, ok := h.Table().LocalRecord(key); return ok }

	if err := zk.DropLease("zookeeper", "zookeeper-holder"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := zk.Apply(nil, []string{key}); !ok || !held() {
		t.Fatalf("the ZooKeeper door's withdrawal took a record the HTTP door holds (held: %v)", held())
	}
	if err := web.DropLease("http", "http-holder"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := web.Apply(nil, []string{key}); !ok || held() {
		t.Fatal("the last holder's withdrawal left the record")
	}
}

// The check of the other doors' leases and the delete it guards are one
// step: a door that holds a record (its lease saved, then the record
// applied) while another door withdraws it (its lease dropped, then the
// delete) ends with the record served, whatever the interleaving. Before,
// the delete could pass the check before the hold and land after the
// put, withdrawing what the holding door had just been told it holds.
func TestWithdrawalRacingAnotherDoorsHoldLeavesTheRecord(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1)})
	zk, nacos := h.For("zookeeper"), h.For("nacos")
	u := routes.Record{URL: &routes.URL{Interface: "I", Category: "providers", URL: "dubbo://10.0.0.1:1/I"}}
	key := u.Key()
	for i := range 20000 {
		zk.Hold(lease.Lease{Door: "zookeeper", ID: "s", Keys: []string{key}}, []routes.Record{u})
		zk.Apply([]routes.Record{u}, nil)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			zk.DropLease("zookeeper", "s")
			zk.Apply(nil, []string{key})
		}()
		go func() {
			defer wg.Done()
			nacos.Hold(lease.Lease{Door: "nacos", ID: "c", Keys: []string{key}}, []routes.Record{u})
			nacos.Apply([]routes.Record{u}, nil)
		}()
		wg.Wait()
		if _, ok := h.Table().LocalRecord(key); !ok {
			t.Fatalf("round %d: the ZooKeeper door's withdrawal took the record the Nacos door holds", i)
		}
		nacos.DropLease("nacos", "c")
		nacos.Apply(nil, []string{key})
	}
}
