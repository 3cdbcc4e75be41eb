package host

import (
	"testing"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// When a door lets go of a record another door holds, the table serves
// what the remaining holders last wrote (issue 41, item 3): the last
// writer among them, its stamp kept; nothing when it wrote nothing there;
// and the table is left alone when the door letting go was not the one
// whose content it held. A door whose registration leaves the record out
// but still holds it counts as having written nothing.
func TestRemainingHoldersContentServedWhenADoorLetsGo(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1)})
	doors := map[string]Host{"rocketmq": h.For("rocketmq"), "http": h.For("http"), "nacos": h.For("nacos")}
	key := routes.BrokerKey("b", 0)
	at := func(addr string) routes.Record {
		return routes.Record{Broker: &routes.Broker{Cluster: "C", Name: "b", Addr: addr}}
	}
	hold := func(door string, r *routes.Record) {
		t.Helper()
		l := lease.Lease{Door: door, ID: door, Keys: []string{key}}
		if r == nil {
			if err := doors[door].PutLease(l); err != nil {
				t.Fatal(err)
			}
			return
		}
		sv, err := doors[door].Hold(l, []routes.Record{*r})
		if err != nil {
			t.Fatal(err)
		}
		doors[door].Apply([]routes.Record{*r}, nil)
		if err := sv.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	letGo := func(door string) {
		t.Helper()
		if err := doors[door].DropLease(door, door); err != nil {
			t.Fatal(err)
		}
		doors[door].Apply(nil, []string{key})
	}
	serves := func(want string) {
		t.Helper()
		r, ok := h.Table().LocalRecord(key)
		switch {
		case want == "" && ok:
			t.Fatalf("serves %s, want nothing", r.Broker.Addr)
		case want != "" && !ok:
			t.Fatalf("serves nothing, want %s", want)
		case want != "" && r.Broker.Addr != want:
			t.Fatalf("serves %s, want %s", r.Broker.Addr, want)
		}
	}
	x, y, z := at("10.0.0.1:1"), at("10.0.0.2:1"), at("10.0.0.3:1")
	hold("rocketmq", &x)
	stampX, _ := h.Table().LocalRecord(key)
	hold("http", &y)
	serves(y.Broker.Addr)
	letGo("http")
	serves(x.Broker.Addr)
	if r, _ := h.Table().LocalRecord(key); r.Broker.Stamp != stampX.Broker.Stamp {
		t.Fatalf("put back with stamp %d, it was registered with %d", r.Broker.Stamp, stampX.Broker.Stamp)
	}

	// Three holders: the last writer among those left is served.
	hold("http", &y)
	hold("nacos", &z)
	hold("http", &y) // http writes last
	hold("nacos", nil)
	letGo("http") // the author goes: nacos wrote after rocketmq
	serves(z.Broker.Addr)
	letGo("rocketmq") // not the author: nothing changes
	serves(z.Broker.Addr)
	letGo("nacos")
	serves("")

	// A holder that never wrote the record: it goes with its author.
	hold("http", nil)
	hold("rocketmq", &x)
	letGo("rocketmq")
	serves("")
	letGo("http")
	if n := len(h.shared); n != 0 {
		t.Fatalf("%d records remembered after every holder let go", n)
	}
}
