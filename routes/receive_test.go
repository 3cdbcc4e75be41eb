package routes

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func budgetQueue(i int) Record { return queue("b1", fmt.Sprintf("T%03d", i), 4) }

// held lists the keys a replica holds of origin.
func held(t *Table, origin string) []string {
	s, _ := t.Snapshot(origin)
	var keys []string
	for _, op := range s.Ops {
		if op.Rec != nil {
			keys = append(keys, op.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// An origin past the budget is refused whole on every replica, whatever
// order its ops arrived in; its ops are ignored meanwhile; once its own
// snapshot is back within the budget every replica holds the same again.
// Before, a replica held whatever any origin sent it.
func TestReplicasRefuseAnOriginPastTheBudget(t *testing.T) {
	b := Budget{Records: 5}
	origin := NewTable("a", 1)
	var ops []Delta
	for i := range 8 {
		d, _ := origin.ApplyLocal([]Record{budgetQueue(i)}, nil)
		ops = append(ops, d)
	}
	replicas := make([]*Table, 4)
	for i := range replicas {
		replicas[i] = NewTable(fmt.Sprintf("r%d", i), 1)
		replicas[i].SetBudget(b)
		order := slices.Clone(ops)
		rand.Shuffle(len(order), func(x, y int) { order[x], order[y] = order[y], order[x] })
		refused := false
		for _, d := range order {
			refused = replicas[i].Apply(d).Refused || refused
		}
		if !refused {
			t.Fatalf("replica %d: no Apply said the origin was refused", i)
		}
		if got := held(replicas[i], "a"); len(got) != 0 {
			t.Fatalf("replica %d holds %v of an origin past the budget", i, got)
		}
		if r, ok := replicas[i].Refused("a"); !ok || r.Usage.Records != 6 {
			t.Fatalf("replica %d: refusal %+v %v", i, r, ok)
		}
		if _, ok := replicas[i].TopicRoute("T000"); ok {
			t.Fatalf("replica %d still routes a refused origin's topic", i)
		}
	}
	// The origin's own snapshot, still past the budget: refused as the
	// truth at its seq, which no pull at that seq can change.
	snap, _ := origin.Snapshot("a")
	for i, r := range replicas {
		r.Merge(snap)
		ref, ok := r.Refused("a")
		e, _ := origin.Entry("a")
		if !ok || !ref.Truth || !ref.Covers(e) || len(held(r, "a")) != 0 {
			t.Fatalf("replica %d after the origin's snapshot: %+v %v, holds %v", i, ref, ok, held(r, "a"))
		}
	}
	// Back within the budget: the ops are ignored (the replicas hold
	// nothing to apply them to), the next pull takes the whole origin.
	d, _ := origin.ApplyLocal(nil, []string{budgetQueue(0).Key(), budgetQueue(1).Key(), budgetQueue(2).Key()})
	snap, _ = origin.Snapshot("a")
	want := held(origin, "a")
	for i, r := range replicas {
		if res := r.Apply(d); res.Applied != 0 {
			t.Fatalf("replica %d applied ops of a refused origin: %+v", i, res)
		}
		ref, _ := r.Refused("a")
		e, _ := origin.Entry("a")
		if ref.Covers(e) {
			t.Fatalf("replica %d: the refusal covers the origin's newer entry %+v", i, e)
		}
		r.Merge(snap)
		if _, ok := r.Refused("a"); ok || !slices.Equal(held(r, "a"), want) {
			t.Fatalf("replica %d holds %v, want %v", i, held(r, "a"), want)
		}
		if got, _ := r.Entry("a"); got != e {
			t.Fatalf("replica %d's entry %+v, the origin's %+v", i, got, e)
		}
	}
}

// Ops that arrive out of order can add up past the budget where the
// origin's state never did (a put before the delete it followed): that
// refusal is not the truth, and the origin's own snapshot at the same seq
// is merged and settles it.
func TestOutOfOrderOpsRefusalIsSettledByTheOrigin(t *testing.T) {
	origin := NewTable("a", 1)
	var ds []Delta
	for i := range 3 {
		d, _ := origin.ApplyLocal([]Record{budgetQueue(i)}, nil)
		ds = append(ds, d)
	}
	del, _ := origin.ApplyLocal(nil, []string{budgetQueue(0).Key()})
	put, _ := origin.ApplyLocal([]Record{budgetQueue(3)}, nil)
	r := NewTable("r", 1)
	r.SetBudget(Budget{Records: 3})
	for _, d := range append(ds, put, del) { // the delete arrives last
		r.Apply(d)
	}
	ref, ok := r.Refused("a")
	e, _ := origin.Entry("a")
	if !ok || ref.Truth || ref.Covers(e) {
		t.Fatalf("refusal %+v %v: want one a pull of the origin's entry %+v settles", ref, ok, e)
	}
	snap, _ := origin.Snapshot("a")
	r.Merge(snap)
	if _, ok := r.Refused("a"); ok || !slices.Equal(held(r, "a"), held(origin, "a")) {
		t.Fatalf("after the origin's snapshot: holds %v, want %v", held(r, "a"), held(origin, "a"))
	}
}

// The bytes count as the records do, and a new incarnation starts
// unrefused.
func TestBudgetBytesAndNewIncarnation(t *testing.T) {
	origin := NewTable("a", 1)
	big := Record{URL: &URL{Interface: "com.x.Y", Category: "providers", URL: "dubbo://10.0.0.1:20880/com.x.Y?pad=" + string(make([]byte, 0)) + fmt.Sprintf("%01000d", 0)}}
	d, _ := origin.ApplyLocal([]Record{big}, nil)
	r := NewTable("r", 1)
	r.SetBudget(Budget{Bytes: 1000})
	if res := r.Apply(d); !res.Refused || res.RefusedUsage.Bytes <= 1000 {
		t.Fatalf("a record over 1000 bytes: %+v", res)
	}
	next := NewTable("a", 2)
	d, _ = next.ApplyLocal([]Record{budgetQueue(0)}, nil)
	if res := r.Apply(d); res.Applied != 1 || res.Refused {
		t.Fatalf("a new incarnation within the budget: %+v", res)
	}
}
