package routes

import (
	"testing"
	"time"
)

// A replica answers what it held of an origin's previous incarnation,
// tombstones included, after the new incarnation retired it (the
// restarted member's tags arrived first), and until the new
// incarnation's own snapshot settles every key.
func TestRememberThePreviousIncarnation(t *testing.T) {
	origin := NewTable("a", 1)
	peer := NewTable("b", 1)
	kept, gone := url("com.x.Kept", "providers", "dubbo://10.0.0.1:1/com.x.Kept"), url("com.x.Gone", "providers", "dubbo://10.0.0.2:1/com.x.Gone")
	d, _ := origin.ApplyLocal([]Record{kept, gone}, nil)
	peer.Apply(d)
	d, _ = origin.ApplyLocal(nil, []string{gone.Key()})
	peer.Apply(d)
	keys := []string{kept.Key(), gone.Key(), "url/com.x.Never/providers/x"}
	check := func(when string) {
		t.Helper()
		r, ok := peer.Remember("a", 2, keys)
		if !ok || r.Inc != 1 || r.Seq != 3 || len(r.Ops) != 2 {
			t.Fatalf("%s: remembers %+v %v, want incarnation 1 at seq 3 with 2 ops", when, r, ok)
		}
		for _, op := range r.Ops {
			if (op.Key == gone.Key()) != (op.Rec == nil) || (op.Key == gone.Key()) != (op.Seq == 3) {
				t.Errorf("%s: %+v", when, op)
			}
		}
	}
	check("before the restart is known")
	peer.Admit("a", 2)
	check("retired")
	if _, ok := peer.Remember("a", 1, keys); ok {
		t.Errorf("answers a run about its own incarnation or a later one")
	}
	restarted := NewTable("a", 2)
	restarted.ApplyLocal([]Record{kept}, nil)
	s, _ := restarted.Snapshot("a")
	peer.Merge(s)
	if r, ok := peer.Remember("a", 3, keys); !ok || r.Inc != 2 {
		t.Errorf("after the new incarnation's snapshot: %+v %v, want incarnation 2", r, ok)
	}
	if _, ok := peer.Remember("a", 2, keys); ok {
		t.Errorf("still remembers incarnation 1 after incarnation 2's own snapshot")
	}
}

// An origin dropped (its agent declared dead before it came back) is
// remembered too, for goneFor, until the member is forgotten.
func TestRememberADroppedOrigin(t *testing.T) {
	origin := NewTable("a", 1)
	peer := NewTable("b", 1)
	now := time.Now()
	peer.now = func() time.Time { return now }
	gone := url("com.x.Gone", "providers", "dubbo://10.0.0.2:1/com.x.Gone")
	d, _ := origin.ApplyLocal([]Record{gone}, nil)
	peer.Apply(d)
	d, _ = origin.ApplyLocal(nil, []string{gone.Key()})
	peer.Apply(d)
	peer.DropOrigin("a", 1)
	if r, ok := peer.Remember("a", 2, []string{gone.Key()}); !ok || len(r.Ops) != 1 || r.Ops[0].Rec != nil || r.Ops[0].Seq != 2 {
		t.Fatalf("after the drop: %+v %v, want the tombstone at seq 2", r, ok)
	}
	peer.Admit("a", 2)
	if _, ok := peer.Remember("a", 2, []string{gone.Key()}); !ok {
		t.Errorf("forgot the dropped incarnation when the member came back")
	}
	now = now.Add(goneFor)
	if _, ok := peer.Remember("a", 2, []string{gone.Key()}); ok {
		t.Errorf("remembers a drop goneFor ago")
	}
	peer.ForgetGone()
	if len(peer.gone) != 0 {
		t.Errorf("ForgetGone kept a drop goneFor old")
	}
	d, _ = origin.ApplyLocal([]Record{gone}, nil) // back at incarnation 2, dropped again
	d.Inc = 2
	peer.Apply(d)
	peer.DropOrigin("a", 2)
	if _, ok := peer.Remember("a", 3, []string{gone.Key()}); !ok {
		t.Fatalf("forgot a fresh drop")
	}
	peer.Forget("a")
	if _, ok := peer.Remember("a", 3, []string{gone.Key()}); ok {
		t.Errorf("remembers a forgotten member")
	}
}
