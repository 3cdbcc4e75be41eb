package routes

import "testing"

// The gossip layer's "is the origin alive?" and the apply are two steps: a
// drop between them must still win. Before the floor, the late delta and
// the late snapshot re-created the dead origin for good.
func TestDroppedIncarnationIsRefused(t *testing.T) {
	a, b := NewTable("a", 7), NewTable("b", 1)
	d, _ := a.ApplyLocal([]Record{broker("c", "b1", 0, "10.0.0.1:10911"), queue("b1", "T", 4)}, nil)
	snap, _ := a.Snapshot("a")

	// The check passed, then the member died; then the apply arrives.
	b.DropOrigin("a", 7)
	if res := b.Apply(d); res.Applied != 0 || res.Stale != 2 {
		t.Fatalf("a delta of a dropped incarnation was applied: %+v", res)
	}
	if res := b.Merge(snap); res.Applied != 0 {
		t.Fatalf("a snapshot of a dropped incarnation was merged: %+v", res)
	}
	if o, n := b.Len(); o != 2 || n != 0 {
		t.Fatalf("table holds %d origins, %d records after the drop; want only ours and the rules", o, n)
	}

	// Seen alive again at the same incarnation (a refuted death): taken.
	b.Admit("a", 7)
	if res := b.Apply(d); res.Applied != 2 {
		t.Fatalf("a delta of an admitted incarnation was refused: %+v", res)
	}
}

// A floor covers the incarnation held even when the member's own is not
// known, and a restart admits the new incarnation but not the old one.
func TestFloorAfterRestart(t *testing.T) {
	a, b := NewTable("a", 7), NewTable("b", 1)
	d, _ := a.ApplyLocal([]Record{queue("b1", "T", 4)}, nil)
	b.Apply(d)
	b.DropOrigin("a", 0) // the member's incarnation unknown: the held one dies
	if res := b.Apply(d); res.Applied != 0 {
		t.Fatalf("the held incarnation was taken again after its drop: %+v", res)
	}
	b.Admit("a", 8) // restarted as 8
	if res := b.Apply(d); res.Applied != 0 {
		t.Fatalf("incarnation 7 was taken after 8 was admitted: %+v", res)
	}
	a8 := NewTable("a", 8)
	d8, _ := a8.ApplyLocal([]Record{queue("b1", "U", 4)}, nil)
	if res := b.Apply(d8); res.Applied != 1 {
		t.Fatalf("the admitted incarnation was refused: %+v", res)
	}
	// Admitting a newer incarnation drops what is held of the older one.
	if !b.Admit("a", 9) {
		t.Fatal("Admit of a newer incarnation kept the older one's records")
	}
	if _, n := b.Len(); n != 0 {
		t.Fatalf("%d records of a superseded incarnation remain", n)
	}
}

// Forget clears a floor: the gossip layer no longer remembers the member,
// and the map of floors does not grow with every name ever dropped.
func TestForgetClearsTheFloor(t *testing.T) {
	a, b := NewTable("a", 3), NewTable("b", 1)
	d, _ := a.ApplyLocal([]Record{queue("b1", "T", 4)}, nil)
	b.DropOrigin("a", 3)
	b.Forget("a")
	if res := b.Apply(d); res.Applied != 1 || len(b.floors) != 0 {
		t.Fatalf("after Forget: %+v, %d floors left", res, len(b.floors))
	}
}
