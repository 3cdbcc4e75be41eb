package routes

import (
	"fmt"
	"testing"
)

func queueAt(queues int, counter int64) Record {
	return Record{Queue: &Queue{Topic: "T", BrokerName: "b", ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6, Counter: counter}}
}

func servedQueues(t *Table) int {
	p, _ := t.QueuePick("b", "T")
	return p.ReadQueueNums
}

// Queue data is served by the later write, not the higher DataVersion
// counter (issue 41, item 1): a master back with a fresh store (counter 3)
// outranks a copy of its old data (counter 50) on every replica, and a
// newer registration on another agent wins whichever name sorts first. A
// write of the same data keeps its stamp (no op), unless another agent's
// other data is served over it; a copy keeps its original's stamp.
func TestLaterQueueWriteIsServed(t *testing.T) {
	a, z := NewTable("a", 1), NewTable("z", 1)
	both := func(d Delta) {
		a.Apply(d)
		z.Apply(d)
	}
	step := func(tb *Table, r Record, wantOp bool, want int) {
		t.Helper()
		d, ok := tb.ApplyLocal([]Record{r}, nil)
		if ok != wantOp {
			t.Fatalf("%s writing %+v: op %v, want %v", tb.Local(), *r.Queue, ok, wantOp)
		}
		both(d)
		for _, x := range []*Table{a, z} {
			if got := servedQueues(x); got != want {
				t.Fatalf("after %s wrote %+v, %s serves %d queues, want %d", tb.Local(), *r.Queue, x.Local(), got, want)
			}
		}
	}
	// Each holds a member of the group, as an agent holding its queue
	// data does.
	for i, tb := range []*Table{a, z} {
		d, _ := tb.ApplyLocal([]Record{broker("C", "b", int64(i), fmt.Sprintf("10.0.0.%d:1", i))}, nil)
		both(d)
	}
	step(z, queueAt(4, 50), true, 4)
	copyOf := func(tb *Table) Record {
		p, _ := tb.QueuePick("b", "T")
		q := p.Queue
		q.Copy = true
		return Record{Queue: &q}
	}
	step(a, copyOf(a), true, 4) // a copy: same stamp, the original served
	if p, _ := a.QueuePick("b", "T"); p.Origin != "z" {
		t.Fatalf("the copy on a outranks its original on z: %+v", p)
	}
	step(a, queueAt(8, 3), true, 8)  // the master's fresh store, on a: lower counter, later write
	step(a, queueAt(8, 3), false, 8) // the same data again: nothing to send
	step(z, queueAt(4, 50), true, 4) // z's data, served over again: a new write
	step(z, queueAt(4, 50), false, 4)
	step(a, queueAt(8, 3), true, 8) // and back

	// One registration's topics share one new stamp.
	puts := []Record{queueAt(2, 9), {Queue: &Queue{Topic: "U", BrokerName: "b", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6, Counter: 9}}}
	z.StampQueues(puts)
	if puts[0].Queue.Stamp == 0 || puts[0].Queue.Stamp != puts[1].Queue.Stamp {
		t.Fatalf("StampQueues gave %d and %d", puts[0].Queue.Stamp, puts[1].Queue.Stamp)
	}
	if p, _ := z.QueuePick("b", "T"); puts[0].Queue.Stamp <= p.Stamp {
		t.Fatalf("StampQueues gave %d, not later than the served %d", puts[0].Queue.Stamp, p.Stamp)
	}
	// A stamped put keeps its stamp, as a restored record does.
	d, _ := z.ApplyLocal(puts, nil)
	both(d)
	if got := z.Queues("b")[0].Stamp; got != puts[0].Queue.Stamp {
		t.Fatalf("stamped put applied with stamp %d, want %d", got, puts[0].Queue.Stamp)
	}
	// A caller's record is never stamped by ApplyLocal.
	r := queueAt(3, 1)
	a.ApplyLocal([]Record{r}, nil)
	if r.Queue.Stamp != 0 {
		t.Fatalf("ApplyLocal stamped the caller's record: %d", r.Queue.Stamp)
	}
}
