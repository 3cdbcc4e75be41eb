package host

import (
	"errors"
	"sync"
	"testing"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// At the budget's exact limit, a write whose lease lets go of one record
// and puts another of the same size in its place (a Nacos 1.x instance
// marked unhealthy: its URL, so its key, changes) goes through: what the
// lease stops covering is counted as freed in the same step as the check.
// A write that grows the records is refused and changes nothing. With
// Hold, the swap was refused: Hold counted the new record alone.
func TestWriteSwapsAtTheBudgetLimit(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1), Budget: routes.Budget{Records: 2}})
	d := h.For("nacos")
	l := lease.Lease{Door: "nacos", ID: "c1"}
	a, b, c := budgetURL(1), budgetURL(2), budgetURL(3)
	if err := d.Write(nil, lease.Write{Lease: l, Puts: []routes.Record{a, b}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(nil, lease.Write{Lease: l, Puts: []routes.Record{c}, Deletes: []string{a.Key()}}); err != nil {
		t.Fatalf("a swap at the limit was refused: %v", err)
	}
	err := d.Write(nil, lease.Write{Lease: l, Puts: []routes.Record{a}})
	if !errors.Is(err, routes.ErrBudget) {
		t.Fatalf("a write past the limit: %v, want the budget's error", err)
	}
	got := h.Leases()
	if len(got) != 1 || len(got[0].Keys) != 2 || got[0].Covers(a.Key()) || h.table.Usage("self").Records != 2 {
		t.Fatalf("after the refusal: leases %+v, table %+v; want b and c held", got, h.table.Usage("self"))
	}
}

// A record another door's lease holds too is not freed by one door
// letting go of it: the budget does not count it, and the table keeps it.
func TestWriteKeepsWhatAnotherDoorHolds(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1), Budget: routes.Budget{Records: 1}})
	a, b := budgetURL(1), budgetURL(2)
	if err := h.For("http").Write(nil, lease.Write{Lease: lease.Lease{Door: "http", ID: a.Key()}, Puts: []routes.Record{a}}); err != nil {
		t.Fatal(err)
	}
	zk := lease.Lease{Door: "zookeeper", ID: "s1"}
	if err := h.For("zookeeper").Write(nil, lease.Write{Lease: zk, Puts: []routes.Record{a}}); err != nil {
		t.Fatal(err)
	}
	err := h.For("zookeeper").Write(nil, lease.Write{Lease: zk, Puts: []routes.Record{b}, Deletes: []string{a.Key()}})
	if !errors.Is(err, routes.ErrBudget) {
		t.Fatalf("a swap freeing a record another door holds: %v, want the budget's error", err)
	}
	if err := h.For("zookeeper").Write(nil, lease.Write{Lease: zk, Deletes: []string{a.Key()}, Drop: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.table.LocalRecord(a.Key()); !ok {
		t.Fatal("a record the http lease holds was withdrawn with the session's")
	}
}

// Write calls unlock once after applying; a refused write does not: the
// door still holds its lock to answer the refusal.
func TestWriteUnlocksOnceApplied(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1), Budget: routes.Budget{Records: 1}})
	var mu sync.Mutex
	for i, want := range []error{nil, routes.ErrBudget} {
		mu.Lock()
		r := budgetURL(i)
		n := 0
		err := h.For("http").Write(func() {
			n++
			if _, ok := h.table.LocalRecord(r.Key()); !ok {
				t.Errorf("write %d: unlocked before it was applied", i)
			}
			mu.Unlock()
		}, lease.Write{Lease: lease.Lease{Door: "http", ID: r.Key()}, Puts: []routes.Record{r}})
		if want != nil {
			if !errors.Is(err, want) || n != 0 {
				t.Fatalf("write %d: %v, unlocked %d times; want refused, still locked", i, err, n)
			}
			mu.Unlock()
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("write %d: %v, unlocked %d times", i, err, n)
		}
	}
}

// A record two leases of one door hold (two Nacos clients registering
// one instance) stays while one of them does: a write letting go of it
// through the other lease deletes nothing, and the budget does not count
// it as freed.
func TestWriteKeepsWhatAnotherLeaseOfTheDoorHolds(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1), Budget: routes.Budget{Records: 1}})
	d := h.For("nacos")
	a, b := budgetURL(1), budgetURL(2)
	c1, c2 := lease.Lease{Door: "nacos", ID: "c1"}, lease.Lease{Door: "nacos", ID: "c2"}
	for _, l := range []lease.Lease{c1, c2} {
		if err := d.Write(nil, lease.Write{Lease: l, Puts: []routes.Record{a}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Write(nil, lease.Write{Lease: c1, Puts: []routes.Record{b}, Deletes: []string{a.Key()}}); !errors.Is(err, routes.ErrBudget) {
		t.Fatalf("a swap freeing a record another lease holds: %v, want the budget's error", err)
	}
	if err := d.Write(nil, lease.Write{Lease: c1, Deletes: []string{a.Key()}, Drop: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.table.LocalRecord(a.Key()); !ok {
		t.Fatal("a record the second lease holds was withdrawn with the first's")
	}
	if err := d.Write(nil, lease.Write{Lease: c2, Deletes: []string{a.Key()}, Drop: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.table.LocalRecord(a.Key()); ok {
		t.Fatal("a record no lease holds stays")
	}
}

// A write deleting records under its own lease's prefix (a master broker
// re-registered without some of its topics) deletes them: the lease's
// prefix still covering them is not another holder.
func TestWriteDeletesUnderItsOwnPrefix(t *testing.T) {
	h := New(Config{Table: routes.NewTable("self", 1)})
	d := h.For("http")
	b := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "b", Addr: "10.0.0.1:10911"}}
	q1 := routes.Record{Queue: &routes.Queue{Topic: "T1", BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
	q2 := routes.Record{Queue: &routes.Queue{Topic: "T2", BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
	l := lease.Lease{Door: "http", ID: b.Key(), Prefixes: []string{routes.QueuePrefix("b")}}
	if err := d.Write(nil, lease.Write{Lease: l, Puts: []routes.Record{b, q1, q2}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(nil, lease.Write{Lease: l, Puts: []routes.Record{b, q2}, Deletes: []string{q1.Key()}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.table.LocalRecord(q1.Key()); ok {
		t.Fatal("a queue its registration left out stays")
	}
	if _, ok := h.table.LocalRecord(q2.Key()); !ok {
		t.Fatal("a queue its registration kept is gone")
	}
}
