package routes

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"unique"
)

// A stored queue record reads back as the Queue it was made from, whatever
// its numbers, and compares equal only to that Queue. The records share one
// interning cache, as a table's do, so a cache that handed out the last
// record's numbers for other ones fails here.
func TestQueueRecRoundTrip(t *testing.T) {
	var last lastQueue
	for _, q := range []Queue{
		{Topic: "T", BrokerName: "b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6},
		{Topic: "U", BrokerName: "b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6},
		{Topic: "%RETRY%g", BrokerName: "broker-a", ReadQueueNums: -1, WriteQueueNums: math.MaxInt, Perm: 2,
			TopicSysFlag: 3, From: 2, StateVersion: math.MinInt64, Counter: math.MaxInt64, Stamp: math.MaxUint64, Copy: true},
		{Topic: "T", BrokerName: "b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, Copy: true},
		{Topic: "T", BrokerName: "b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6},
	} {
		key := QueueKey(q.BrokerName, q.Topic)
		s := &entry{key: key, seq: 1, origin: unique.Make("o"), rec: store(key, Record{Queue: &q}, &last)}
		if got := *s.record().Queue; got != q {
			t.Fatalf("stored %+v, read back %+v", q, got)
		}
		if got := *s.clone().Queue; got != q {
			t.Fatalf("stored %+v, cloned %+v", q, got)
		}
		if !s.equal(Record{Queue: &q}) {
			t.Fatalf("%+v is not equal to itself stored", q)
		}
		for _, change := range []func(*Queue){
			func(o *Queue) { o.Topic += "x" }, func(o *Queue) { o.BrokerName += "x" },
			func(o *Queue) { o.Counter++ }, func(o *Queue) { o.Copy = !o.Copy }, func(o *Queue) { o.Stamp++ },
		} {
			o := q
			change(&o)
			if s.equal(Record{Queue: &o}) {
				t.Fatalf("%+v stored equals %+v", q, o)
			}
		}
		if s.equal(Record{Broker: &Broker{Name: q.BrokerName}}) {
			t.Fatal("a queue record equals a broker record")
		}
	}
}

// refBefore is the documented precedence of two queue records of one
// (broker name, topic), written out on Queues for the test.
func refBefore(q Queue, origin string, o Queue, oorigin string) bool {
	switch {
	case (q.From == 0) != (o.From == 0):
		return q.From == 0
	case q.From != o.From:
		return q.From < o.From
	case q.StateVersion != o.StateVersion:
		return q.StateVersion > o.StateVersion
	case q.Stamp != o.Stamp:
		return q.Stamp > o.Stamp
	case q.Counter != o.Counter:
		return q.Counter > o.Counter
	case q.Copy != o.Copy:
		return !q.Copy
	}
	return origin < oorigin
}

// The queue views answer, after every batch of random puts and deletes on
// several origins, what the precedence rule picks from every origin's live
// records: the packed records and the per-topic lists change nothing.
func TestQueueViewsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	names, topics := []string{"b0", "b1", "b2"}, []string{"T0", "T1", "T2", "T3"}
	replica := NewTable("replica", 1)
	var origins []*Table
	for o := range 5 {
		origins = append(origins, NewTable(fmt.Sprintf("o%d", o), 1))
	}
	for _, n := range names {
		d, _ := origins[0].ApplyLocal([]Record{broker("c", n, 0, "10.0.0.1:10911")}, nil)
		replica.Apply(d)
	}
	for round := range 300 {
		src := origins[rng.Intn(len(origins))]
		var puts []Record
		var dels []string
		for range 1 + rng.Intn(6) {
			n, tp := names[rng.Intn(len(names))], topics[rng.Intn(len(topics))]
			if rng.Intn(3) == 0 {
				dels = append(dels, QueueKey(n, tp))
				continue
			}
			puts = append(puts, Record{Queue: &Queue{Topic: tp, BrokerName: n, ReadQueueNums: 1 + rng.Intn(2),
				WriteQueueNums: 4, Perm: 6, From: int64(rng.Intn(3)), StateVersion: int64(rng.Intn(2)),
				Counter: int64(rng.Intn(2)), Stamp: uint64(rng.Intn(3)), Copy: rng.Intn(2) == 0}})
		}
		if d, ok := src.ApplyLocal(puts, dels); ok {
			replica.Apply(d)
		}
		var wantTopics []string
		for _, tp := range topics {
			var want []QueueData
			for _, n := range names {
				var best *Held
				for _, h := range replica.Holders(QueueKey(n, tp)) {
					if best == nil || refBefore(*h.Rec.Queue, h.Origin, *best.Rec.Queue, best.Origin) {
						best = &h
					}
				}
				got, ok := replica.QueuePick(n, tp)
				if (best != nil) != ok || ok && (got.Queue != *best.Rec.Queue || got.Origin != best.Origin) {
					t.Fatalf("round %d: pick of %s on %s is %+v (%v), want %+v", round, tp, n, got, ok, best)
				}
				if best != nil {
					q := best.Rec.Queue
					want = append(want, QueueData{BrokerName: n, ReadQueueNums: q.ReadQueueNums,
						WriteQueueNums: q.WriteQueueNums, Perm: q.Perm, TopicSysFlag: q.TopicSysFlag})
				}
			}
			route, ok := replica.TopicRoute(tp)
			if ok != (len(want) > 0) || !slices.Equal(route.QueueDatas, want) {
				t.Fatalf("round %d: route of %s is %+v (%v), want %+v", round, tp, route.QueueDatas, ok, want)
			}
			if ok {
				wantTopics = append(wantTopics, tp)
			}
		}
		if got := replica.Topics(); !slices.Equal(got, wantTopics) {
			t.Fatalf("round %d: topics %v, want %v", round, got, wantTopics)
		}
	}
	for _, o := range origins[1:] {
		replica.DropOrigin(o.Local(), 0)
	}
	origins[0].ApplyLocal(nil, replica.Keys(queuePrefix))
	replica.DropOrigin(origins[0].Local(), 0)
	if n := len(replica.views.queues); n != 0 {
		t.Fatalf("%d topics still listed after every origin was dropped", n)
	}
}

// A topic's list gives back its room as it empties.
func TestRemoveQueueShrinks(t *testing.T) {
	m := map[string][]*entry{}
	var recs []*entry
	for i := range 100 {
		key := QueueKey(fmt.Sprintf("b%d", i), "T")
		q := &entry{key: key, seq: 1, origin: unique.Make("o"), rec: store(key, queue(fmt.Sprintf("b%d", i), "T", 1), &lastQueue{})}
		m["T"] = append(m["T"], q)
		recs = append(recs, q)
	}
	for i, q := range recs[:90] {
		removeQueue(m, q)
		if slices.Contains(m["T"], q) || len(m["T"]) != 100-i-1 {
			t.Fatalf("after removing %d: %d left, removed one still listed: %v", i+1, len(m["T"]), slices.Contains(m["T"], q))
		}
	}
	if c := cap(m["T"]); c > 40 {
		t.Fatalf("10 records left in an array of %d", c)
	}
	for _, q := range recs[90:] {
		removeQueue(m, q)
	}
	if _, ok := m["T"]; ok {
		t.Fatal("an empty topic is still listed")
	}
}
