package routes

import (
	"context"
	"testing"
	"time"
)

func broker(cluster, name string, id int64, addr string) Record {
	return Record{Broker: &Broker{Cluster: cluster, Name: name, ID: id, Addr: addr}}
}

func queue(broker, topic string, n int) Record {
	return Record{Queue: &Queue{Topic: topic, BrokerName: broker, ReadQueueNums: n, WriteQueueNums: n, Perm: 6}}
}

func TestApplyLocalOnlyEmitsChanges(t *testing.T) {
	tb := NewTable("a", 1)
	d, ok := tb.ApplyLocal([]Record{broker("c", "b1", 0, "10.0.0.1:10911"), queue("b1", "T", 4)}, nil)
	if !ok || len(d.Ops) != 2 || d.Ops[0].Seq != 1 || d.Ops[1].Seq != 2 {
		t.Fatalf("first registration: ok=%v delta=%+v", ok, d)
	}
	if _, ok := tb.ApplyLocal([]Record{queue("b1", "T", 4)}, nil); ok {
		t.Fatal("re-registering identical content must not produce a delta")
	}
	d, ok = tb.ApplyLocal([]Record{queue("b1", "T", 8)}, []string{"queue/b1/none"})
	if !ok || len(d.Ops) != 1 || d.Ops[0].Seq != 3 {
		t.Fatalf("changed queue: ok=%v delta=%+v", ok, d)
	}
}

func TestRouteReplicates(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	d, _ := a.ApplyLocal([]Record{broker("c", "b1", 0, "10.0.0.1:10911"), broker("c", "b1", 1, "10.0.0.2:10911"), queue("b1", "T", 4)}, nil)
	if res := b.Apply(d); res.Applied != 3 {
		t.Fatalf("apply: %+v", res)
	}
	r, ok := b.TopicRoute("T")
	if !ok || len(r.QueueDatas) != 1 || r.BrokerDatas[0].BrokerAddrs[1] != "10.0.0.2:10911" || r.BrokerDatas[0].Origin() != "a" {
		t.Fatalf("route on replica: %+v ok=%v", r, ok)
	}
	if got := b.Clusters().ClusterAddrTable["c"]; len(got) != 1 || got[0] != "b1" {
		t.Fatalf("cluster table: %v", got)
	}
	b.DropOrigin("a", 0)
	if _, ok := b.TopicRoute("T"); ok {
		t.Fatal("route of a dropped origin is still served")
	}
	if len(b.Topics()) != 0 || len(b.Clusters().BrokerAddrTable) != 0 {
		t.Fatal("views keep a dropped origin")
	}
}

func TestQueueWithoutBrokerIsNotRouted(t *testing.T) {
	a := NewTable("a", 1)
	a.ApplyLocal([]Record{queue("b1", "T", 4)}, nil)
	if _, ok := a.TopicRoute("T"); ok {
		t.Fatal("a topic whose broker is not registered must not have a route")
	}
}

// A restarted origin's new incarnation replaces the old one key by key:
// the old records stay served (retired) until the new incarnation writes
// their key, and the rest go with the origin's own snapshot. A peer never
// holds neither.
func TestNewIncarnationSupersedes(t *testing.T) {
	old, b := NewTable("a", 1), NewTable("b", 1)
	d, _ := old.ApplyLocal([]Record{broker("c", "b1", 0, "old:1"), queue("b1", "T", 4), queue("b1", "OLD", 4)}, nil)
	b.Apply(d)
	restarted := NewTable("a", 2)
	if !b.Admit("a", 2) {
		t.Fatal("Admit of a new incarnation did not retire the old one")
	}
	if topics := b.Topics(); len(topics) != 2 {
		t.Fatalf("retiring dropped routes before the new incarnation wrote anything: %v", topics)
	}
	d2, _ := restarted.ApplyLocal([]Record{broker("c", "b1", 0, "new:1"), queue("b1", "T", 4)}, nil)
	for _, op := range d2.Ops { // one op at a time, as gossip applies them
		b.Apply(Delta{Origin: d2.Origin, Inc: d2.Inc, Ops: []Op{op}})
		if r, ok := b.TopicRoute("T"); !ok || len(r.BrokerDatas) != 1 {
			t.Fatalf("route of T missing mid-handover: %+v", r)
		}
	}
	if r, _ := b.TopicRoute("T"); r.BrokerDatas[0].BrokerAddrs[0] != "new:1" {
		t.Fatalf("route not from the new incarnation: %+v", r)
	}
	if b.Retired("a") != 1 {
		t.Fatalf("retired records: %d, want 1 (OLD's queue)", b.Retired("a"))
	}
	if mine, theirs := b.Digest()["a"], restarted.Digest()["a"]; !mine.Diverged(theirs) {
		t.Fatalf("a digest with retired records must differ from the origin's, to pull its snapshot: %+v %+v", mine, theirs)
	}
	s, _ := restarted.Snapshot("a")
	b.Merge(s)
	if topics := b.Topics(); len(topics) != 1 || topics[0] != "T" {
		t.Fatalf("old incarnation's topics survive the new one's snapshot: %v", topics)
	}
	if mine, theirs := b.Digest()["a"], restarted.Digest()["a"]; mine != theirs {
		t.Fatalf("digest after the snapshot %+v, origin's %+v", mine, theirs)
	}
	if res := b.Apply(d); res.Stale != 3 || res.Applied != 0 {
		t.Fatalf("a late delta of the old incarnation must be stale: %+v", res)
	}
}

// An origin that restarts with nothing to republish (its registrations
// expired meanwhile) must still end its retired records everywhere: the
// summaries differ, and its own snapshot clears them.
func TestEmptyNewIncarnationEndsRetired(t *testing.T) {
	old, b := NewTable("a", 1), NewTable("b", 1)
	d, _ := old.ApplyLocal([]Record{broker("c", "b1", 0, "old:1"), queue("b1", "T", 4)}, nil)
	b.Apply(d)
	restarted := NewTable("a", 2)
	b.Admit("a", 2)
	if _, ok := b.TopicRoute("T"); !ok {
		t.Fatal("retired route not served")
	}
	if b.Summary() == restarted.Summary() {
		t.Fatal("summaries agree while b still serves a's retired records: anti-entropy would never pull")
	}
	if mine, theirs := b.Digest()["a"], restarted.Digest()["a"]; !mine.Diverged(theirs) {
		t.Fatalf("digest %+v vs origin's %+v: want diverged", mine, theirs)
	}
	s, _ := restarted.Snapshot("a")
	b.Merge(s)
	if _, ok := b.TopicRoute("T"); ok || b.Retired("a") != 0 {
		t.Fatal("retired records survive the origin's empty snapshot")
	}
	if b.Summary() != restarted.Summary() {
		t.Fatal("summaries still differ once in sync")
	}
}

func TestInvalidOpsChangeNothing(t *testing.T) {
	b := NewTable("b", 1)
	bad := Delta{Origin: "a", Inc: 1, Ops: []Op{
		{Key: "queue/x/T", Seq: 1, Rec: &Record{}},                                                 // no field set
		{Key: "queue/wrong/key", Seq: 2, Rec: &Record{Queue: &Queue{Topic: "T", BrokerName: "x"}}}, // key mismatch
		{Key: "queue/x/a/b", Seq: 3, Rec: &Record{Queue: &Queue{Topic: "a/b", BrokerName: "x"}}},   // slash in a name
		{Key: "", Seq: 4},
		{Key: "queue/x/T", Seq: 0},
	}}
	idx := b.Index()
	if res := b.Apply(bad); res.Invalid != 5 || res.Applied != 0 {
		t.Fatalf("result %+v", res)
	}
	if b.Index() != idx || len(b.Topics()) != 0 {
		t.Fatal("invalid ops changed the table")
	}
	if res := b.Apply(Delta{Origin: "b", Inc: 1, Ops: []Op{{Key: "queue/x/T", Seq: 1, Rec: &Record{Queue: &Queue{Topic: "T", BrokerName: "x"}}}}}); res.Applied != 0 {
		t.Fatal("a remote delta for our own origin must be ignored")
	}
}

func TestAuthoritativeSnapshotRemovesMissedDeletes(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	d1, _ := a.ApplyLocal([]Record{queue("b1", "T", 4), broker("c", "b1", 0, "x:1")}, nil)
	b.Apply(d1)
	a.ApplyLocal(nil, []string{QueueKey("b1", "T")}) // b misses this delete
	d3, _ := a.ApplyLocal([]Record{queue("b1", "U", 4)}, nil)
	b.Apply(d3)
	ea, eb := a.Digest()["a"], b.Digest()["a"]
	if !eb.Diverged(ea) {
		t.Fatalf("missed delete not visible in digests: a=%+v b=%+v", ea, eb)
	}
	s, _ := a.Snapshot("a")
	b.Merge(s)
	if b.Digest()["a"] != a.Digest()["a"] {
		t.Fatalf("digests differ after authoritative merge: %+v vs %+v", b.Digest()["a"], a.Digest()["a"])
	}
	if _, ok := b.TopicRoute("T"); ok {
		t.Fatal("deleted topic survives")
	}
}

func TestWaitWakesOnChange(t *testing.T) {
	a := NewTable("a", 1)
	idx := a.Index()
	done := make(chan uint64)
	go func() { done <- a.Wait(context.Background(), idx) }()
	a.ApplyLocal([]Record{queue("b1", "T", 1)}, nil)
	select {
	case got := <-done:
		if got <= idx {
			t.Fatalf("wait returned %d, not past %d", got, idx)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not wake on a change")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := a.Wait(ctx, a.Index()); got != a.Index() {
		t.Fatalf("cancelled wait returned %d", got)
	}
}

func TestURLViews(t *testing.T) {
	a := NewTable("a", 1)
	u := func(iface, cat, s string) Record { return Record{URL: &URL{Interface: iface, Category: cat, URL: s}} }
	a.ApplyLocal([]Record{
		u("com.foo.Bar", "providers", "dubbo://1.1.1.1:20880/com.foo.Bar"),
		u("com.foo.Bar", "providers", "dubbo://1.1.1.2:20880/com.foo.Bar"),
		u("com.foo.Bar", "consumers", "consumer://1.1.1.3/com.foo.Bar?category=consumers"),
	}, nil)
	if got := a.URLs("com.foo.Bar", "providers"); len(got) != 2 {
		t.Fatalf("providers: %v", got)
	}
	if got := a.URLs("com.foo.Bar", ""); len(got) != 3 {
		t.Fatalf("all categories: %v", got)
	}
	if got := a.Services(); len(got) != 1 || got[0] != "com.foo.Bar" {
		t.Fatalf("services: %v", got)
	}
}

// A broker's identity is its name and id: its cluster is content. Put again
// under another cluster, it is one op replacing one key, so a replica never
// holds both records, whatever order ops arrive in.
func TestBrokerUnderAnotherClusterReplacesItsRecord(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	d1, _ := a.ApplyLocal([]Record{broker("Old", "b1", 0, "10.0.0.1:10911")}, nil)
	d2, ok := a.ApplyLocal([]Record{broker("New", "b1", 0, "10.0.0.2:10911")}, nil)
	if !ok || len(d2.Ops) != 1 || d2.Ops[0].Key != d1.Ops[0].Key {
		t.Fatalf("re-registration under another cluster: ok=%v delta=%+v, want one op on key %q", ok, d2, d1.Ops[0].Key)
	}
	// Out of order on the replica: the older op is stale.
	b.Apply(d2)
	b.Apply(d1)
	for _, tb := range []*Table{a, b} {
		if bs := tb.Brokers("b1"); len(bs) != 1 || bs[0].Cluster != "New" || bs[0].Addr != "10.0.0.2:10911" {
			t.Fatalf("%s holds %+v, want only the registration under New", tb.Local(), bs)
		}
		ci := tb.Clusters()
		if len(ci.ClusterAddrTable["Old"]) != 0 || ci.BrokerAddrTable["b1"].Cluster != "New" {
			t.Fatalf("%s cluster table %+v", tb.Local(), ci)
		}
	}
}
