package routes

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A replica whose records of an origin differ from the origin's at the
// same seq (same digest seq, other hash) must hold exactly the origin's
// after merging the origin's own snapshot, whatever the difference: a key
// missing, a key the origin does not hold, a key at another seq with other
// content, or a tombstone where the origin holds the key. Seq alone cannot
// say which is right; the origin's snapshot is the truth at its seq.
func TestAuthoritativeSnapshotRepairsAnyDivergence(t *testing.T) {
	u := func(i int, v string) Record {
		raw := fmt.Sprintf("dubbo://10.0.0.%d:20880/com.x.Svc?v=%s", i, v)
		return Record{URL: &URL{Interface: "com.x.Svc", Category: "providers", URL: raw}}
	}
	key := func(i int) string { return u(i, "1").Key() }
	plant := map[string]func(b *Table, seq uint64){
		"missing key": nil, // the replica never got key 2's op
		"other seq and content": func(b *Table, seq uint64) {
			// Two ops of one origin at one seq (a seq reused): the
			// replica's is the later seq, so per key it looks newer.
			r := u(2, "1")
			r.URL.Data = "10.9.9.9"
			b.Apply(Delta{Origin: "a", Inc: 1, Ops: []Op{{Key: key(2), Seq: seq, Rec: &r}}})
		},
		"tombstone over a live key": func(b *Table, seq uint64) {
			b.Apply(Delta{Origin: "a", Inc: 1, Ops: []Op{{Key: key(1), Seq: seq}}})
		},
		"extra key": func(b *Table, seq uint64) {
			r := u(9, "1")
			b.Apply(Delta{Origin: "a", Inc: 1, Ops: []Op{{Key: r.Key(), Seq: seq, Rec: &r}}})
		},
	}
	for name, plantIt := range plant {
		for _, parts := range []int{0, 64} {
			t.Run(fmt.Sprintf("%s/parts=%d", name, parts), func(t *testing.T) {
				a, b := NewTable("a", 1), NewTable("b", 1)
				for i := 1; i <= 4; i++ {
					d, _ := a.ApplyLocal([]Record{u(i, "1")}, nil)
					if i != 2 || plantIt != nil {
						b.Apply(d)
					}
				}
				seq := a.Digest()["a"].Seq
				if plantIt != nil {
					plantIt(b, seq-1) // at or below the origin's seq: no later op will settle it
				}
				b.Apply(Delta{Origin: "a", Inc: 1, Ops: []Op{{Key: key(4), Seq: seq, Rec: func() *Record { r := u(4, "1"); return &r }()}}})
				ea, eb := a.Digest()["a"], b.Digest()["a"]
				if !eb.Diverged(ea) {
					t.Fatalf("planted divergence not visible: origin %+v replica %+v", ea, eb)
				}
				s, _ := a.Snapshot("a")
				if parts == 0 {
					b.Merge(s)
				} else {
					ps, _ := s.Split(parts)
					for _, p := range ps {
						b.Merge(p)
					}
				}
				if eb, ea := b.Digest()["a"], a.Digest()["a"]; eb != ea {
					t.Fatalf("after the origin's snapshot the replica holds %+v, the origin %+v", eb, ea)
				}
				if got, want := liveOps(b, "a"), liveOps(a, "a"); got != want {
					t.Fatalf("replica holds\n%s\norigin\n%s", got, want)
				}
				if got, want := b.URLs("com.x.Svc", "providers"), a.URLs("com.x.Svc", "providers"); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("replica serves %v, origin %v", got, want)
				}
			})
		}
	}
}

// liveOps lists what t holds live of origin, one key a line, sorted.
func liveOps(t *Table, origin string) string {
	s, _ := t.Snapshot(origin)
	var lines []string
	for _, op := range s.Ops {
		if op.Rec != nil {
			lines = append(lines, fmt.Sprintf("%s@%d %+v", op.Key, op.Seq, *op.Rec.URL))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
