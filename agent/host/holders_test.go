package host

import (
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
	if !zk.Apply(nil, []string{key}) || !held() {
		t.Fatalf("the ZooKeeper door's withdrawal took a record the HTTP door holds (held: %v)", held())
	}
	if err := web.DropLease("http", "http-holder"); err != nil {
		t.Fatal(err)
	}
	if !web.Apply(nil, []string{key}) || held() {
		t.Fatal("the last holder's withdrawal left the record")
	}
}
