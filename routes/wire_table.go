package routes

import (
	"slices"
	"strings"
	"unique"
)

// EncodeBinaryParts encodes what the table holds of origin exactly as
// Snapshot(origin).EncodeBinaryParts would, byte for byte, without the
// snapshot: that copied every record (a Queue and a Record per queue
// record, 50,050 of them for one origin of P4's table) and sorted 48-byte
// ops, ~30 ms and ~10 MB of garbage per answer before its first byte left.
// Entries are immutable, so the read lock is held only to collect their
// pointers (and the few tombstones and rule writers); the sort and the
// encoding run after it, while the table takes writes. ok is false if the
// table holds nothing of origin.
func (t *Table) EncodeBinaryParts(origin string, maxBytes int, emit func(part []byte)) (ok bool) {
	t.mu.RLock()
	st, ok := t.origins[origin]
	if !ok {
		t.mu.RUnlock()
		return false
	}
	head := Snapshot{Origin: origin, Inc: st.inc, Seq: st.seq, Authoritative: origin == t.local}
	// The key beside its entry: the sort compares keys without first
	// loading each entry.
	live := make([]keyed, 0, st.live.len())
	for k, e := range st.live.all() {
		live = append(live, keyed{k, e})
	}
	var writers map[string]string
	if len(st.writers) > 0 {
		writers = make(map[string]string, len(st.writers))
		for k, w := range st.writers {
			writers[k] = w
		}
	}
	tombs := make([]Op, 0, len(st.tombs))
	for k, tb := range st.tombs {
		tombs = append(tombs, Op{Key: k, Seq: tb.seq, Writer: tb.writer})
	}
	t.mu.RUnlock()

	slices.SortFunc(live, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	slices.SortFunc(tombs, func(a, b Op) int { return strings.Compare(a.Key, b.Key) })
	p := partEncoder{head: head, maxBytes: maxBytes, emit: emit}
	// A key is live or a tombstone, never both: the two sorted lists are
	// merged into one key order.
	var q Queue
	var rec Record
	for len(live) > 0 || len(tombs) > 0 {
		if len(live) == 0 || (len(tombs) > 0 && tombs[0].Key < live[0].key) {
			p.add(tombs[0])
			tombs = tombs[1:]
			continue
		}
		e := live[0].e
		live = live[1:]
		if v, isQueue := e.rec.p.(unique.Handle[queueVals]); isQueue {
			e.fillQueue(&q, v.Value())
			rec = Record{Queue: &q}
		} else {
			rec = e.record()
		}
		p.add(Op{Key: e.key, Seq: e.seq, Rec: &rec, Writer: writers[e.key]})
	}
	p.finish("")
	return true
}

// fillQueue sets q to the queue record of e, whose numbers are v, without
// allocating one (e.queue does).
func (e *entry) fillQueue(q *Queue, v queueVals) {
	*q = Queue{Topic: e.topic(), BrokerName: e.brokerName(), ReadQueueNums: v.ReadQueueNums,
		WriteQueueNums: v.WriteQueueNums, Perm: v.Perm, TopicSysFlag: v.TopicSysFlag, From: v.From,
		StateVersion: v.StateVersion, Counter: v.Counter, Stamp: v.Stamp, Copy: v.Copy}
}

type keyed struct {
	key string
	e   *entry
}
