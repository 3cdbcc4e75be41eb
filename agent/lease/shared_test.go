package lease

import (
	"fmt"
	"slices"
	"testing"

	"github.com/namecast/namecast/routes"
)

// holdAndApply changes records as a door does: Hold, apply, Wait.
func holdAndApply(t *testing.T, a *testAgent, l Lease, recs ...routes.Record) {
	t.Helper()
	sv, err := a.leases.Hold(l, recs)
	if err != nil {
		t.Fatal(err)
	}
	a.table.ApplyLocal(recs, nil)
	if err := sv.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A record held by two leases (a URL a ZooKeeper session created and an
// HTTP registration with a TTL both hold) comes back from a kill -9 as it
// was last acknowledged, whichever of them changed it last: a Hold that
// changes a record saves every other lease covering it with the new
// record, in the same log entry. Before, only the changing lease was
// written; the other kept the old record, and a restart restored the one
// its lease came later in the files (the first written lease's position
// in the log, a random one in a snapshot), so the acknowledged change was
// lost half the time or always.
func TestChangeOfARecordTwoLeasesHoldSurvivesACrash(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	znode := func(data string) routes.Record {
		return routes.Record{Znode: &routes.Znode{Path: "/services/app/inst", Data: []byte(data), Stamp: a.table.Stamp()}}
	}
	v1 := znode("revision=1")
	key := v1.Key()
	zk := Lease{Door: "zookeeper", ID: "1", Keys: []string{key}}
	http := Lease{Door: "http", ID: key, Keys: []string{key}}
	holdAndApply(t, a, zk, v1)
	holdAndApply(t, a, http, v1)
	holdAndApply(t, a, zk, znode("revision=2")) // acknowledged: the Wait returned
	for i := range 3 {                          // kill -9, then again after the restart's snapshot
		a = leaseAgent(t, dir)
		r, ok := a.table.LocalRecord(key)
		if !ok || r.Znode == nil || string(r.Znode.Data) != "revision=2" {
			t.Fatalf("restart %d restored %s as %+v, want revision=2, acknowledged last", i+1, key, r)
		}
	}
}

// HoldAll writes several leases' changes as one log entry, puts and
// drops, and a restart replays all of it: one lease changed, one gone.
func TestHoldAllIsOneEntryAndReplays(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	rec := func(name, addr string) routes.Record {
		return routes.Record{Broker: &routes.Broker{Cluster: "c", Name: name, Addr: addr}}
	}
	ra, rb := rec("a", "10.0.0.1:1"), rec("b", "10.0.0.2:1")
	la := Lease{Door: "test", ID: "a", Keys: []string{ra.Key()}}
	lb := Lease{Door: "test", ID: "b", Keys: []string{rb.Key()}}
	holdAndApply(t, a, la, ra)
	holdAndApply(t, a, lb, rb)
	before := a.leases.log.Last()
	ra2 := rec("a", "10.0.0.9:1")
	sv, err := a.leases.HoldAll([]Change{{Lease: la, Recs: []routes.Record{ra2}}, {Lease: lb, Drop: true}})
	if err != nil {
		t.Fatal(err)
	}
	if n := a.leases.log.Last() - before; n != 1 {
		t.Errorf("HoldAll of two leases wrote %d log entries, want 1", n)
	}
	a.table.ApplyLocal([]routes.Record{ra2}, []string{rb.Key()})
	if err := sv.Wait(); err != nil { // writes a's records as stamped by the table
		t.Fatal(err)
	}
	if got, want := restored(t, dir), []string{"a=10.0.0.9:1"}; !slices.Equal(got, want) {
		t.Fatalf("a restart restores %v, want %v", got, want)
	}
}

// A Hold among 5,000 leases finds the other holders of its records by
// look-ups (setLocked's index), not by reading every lease: reading
// every lease cost 5.0 ms a Hold, under the save lock every writer takes.
func BenchmarkOthersHoldingAmong5000Leases(b *testing.B) {
	a := leaseAgent(b, b.TempDir())
	url := func(i int) routes.Record {
		return routes.Record{URL: &routes.URL{Interface: "com.example.B", Category: "providers",
			URL: fmt.Sprintf("dubbo://10.0.%d.%d:20880/com.example.B", i/256, i%256)}}
	}
	a.leases.mu.Lock()
	for i := range 5000 {
		k := url(i).Key()
		a.leases.setLocked(leaseKey("http", k), Lease{Door: "http", ID: k, Keys: []string{k}})
	}
	a.leases.mu.Unlock()
	recs := []routes.Record{url(6000)}
	b.ResetTimer()
	for range b.N {
		if _, err := a.leases.othersHolding("new", recs); err != nil {
			b.Fatal(err)
		}
	}
}

// A lease covering a prefix (a broker's queues) is another holder of a
// record under it: changed by another lease, it is saved with the change.
func TestPrefixLeaseIsAnotherHolder(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	q := func(perm int) routes.Record {
		return routes.Record{Queue: &routes.Queue{Topic: "t", BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: perm}}
	}
	q1 := q(6)
	rmq := Lease{Door: "rocketmq", ID: "b", Prefixes: []string{routes.QueuePrefix("b")}}
	http := Lease{Door: "http", ID: q1.Key(), Keys: []string{q1.Key()}}
	holdAndApply(t, a, rmq, q1)
	holdAndApply(t, a, http, q1)
	holdAndApply(t, a, http, q(4))
	saved, err := SavedRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	for id, recs := range saved {
		for _, r := range recs {
			if r.Queue != nil {
				holders++
				if r.Queue.Perm != 4 {
					t.Errorf("lease %s saved the queue with perm %d, want 4 as last changed", id, r.Queue.Perm)
				}
			}
		}
	}
	if holders != 2 {
		t.Errorf("%d saved leases hold the queue, want 2", holders)
	}
}

// HeldByOtherDoor finds holders through the index as Covers says: by
// key, by a prefix ending at a separator, never by a bare "starts with".
func TestHeldByOtherDoorByKeyAndPrefix(t *testing.T) {
	a := leaseAgent(t, "")
	a.leases.PutLease(Lease{Door: "rocketmq", ID: "b", Prefixes: []string{"queue/b/", "old/key"}})
	a.leases.PutLease(Lease{Door: "zookeeper", ID: "1", Keys: []string{"znode/a/b"}})
	for _, c := range []struct {
		key, door string
		want      bool
	}{
		{"queue/b/t1", "http", true},
		{"queue/b/t1", "rocketmq", false}, // its own door's
		{"queue/bc/t1", "http", false},
		{"queue/b/", "http", true},
		{"old/key", "http", true},
		{"old/key2", "http", false},
		{"znode/a/b", "http", true},
		{"znode/a/bc", "http", false},
		{"znode/a", "http", false},
	} {
		if got := a.leases.HeldByOtherDoor(c.key, c.door); got != c.want {
			t.Errorf("HeldByOtherDoor(%q, %q) = %v, want %v", c.key, c.door, got, c.want)
		}
	}
	a.leases.DropLease("rocketmq", "b")
	if a.leases.HeldByOtherDoor("queue/b/t1", "http") {
		t.Error("a dropped lease still holds its records")
	}
}
