package routes

import (
	"fmt"
	"math/rand"
	"testing"
)

// The live set holds what a Go map would, through random puts, replaces
// and deletes that grow it, shrink it and empty it again, with keys
// chosen from a small space so that runs of colliding slots form and
// deletes must move entries back.
func TestLiveSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var s liveSet
	want := map[string]*entry{}
	check := func(step int) {
		t.Helper()
		if s.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, s.len(), len(want))
		}
		for k, e := range want {
			if got, ok := s.get(k); !ok || got != e {
				t.Fatalf("step %d: get(%q) = %v, %v; want %v", step, k, got, ok, e)
			}
		}
		seen := map[string]bool{}
		for k, e := range s.all() {
			if seen[k] || want[k] != e || e.key != k {
				t.Fatalf("step %d: all yielded %q (%v) twice or wrongly", step, k, e)
			}
			seen[k] = true
		}
		if len(seen) != len(want) {
			t.Fatalf("step %d: all yielded %d entries, want %d", step, len(seen), len(want))
		}
		for i, e := range s.slots {
			if e != nil && s.hashes[i] != hashKey(e.key) {
				t.Fatalf("step %d: slot %d holds %q with hash %#x, want %#x", step, i, e.key, s.hashes[i], hashKey(e.key))
			}
		}
		if len(s.slots) > 0 && (s.n*4 > len(s.slots)*3 || len(s.slots) > 8 && s.n*8 < len(s.slots)/2) {
			t.Fatalf("step %d: %d entries in %d slots", step, s.n, len(s.slots))
		}
	}
	for step := range 40000 {
		// Grow to ~2000 keys, then mostly delete, then grow again; last,
		// six keys in an 8-slot table, where runs wrap around its end.
		space, putBias := 3000, 0.7
		if step/5000%2 == 1 {
			putBias = 0.2
		}
		if step >= 20000 {
			space, putBias = 6, 0.5
		}
		k := fmt.Sprintf("queue/b/%d", rng.Intn(space))
		if rng.Float64() < putBias {
			e := &entry{key: k, seq: uint64(step)}
			s.put(e)
			want[k] = e
		} else {
			s.del(k)
			delete(want, k)
		}
		if step%997 == 0 || step >= 20000 && step%7 == 0 {
			check(step)
		}
	}
	check(-1)
	for k := range want {
		s.del(k)
	}
	if s.len() != 0 || s.slots != nil || s.hashes != nil {
		t.Fatalf("emptied set: len %d, %d slots", s.len(), len(s.slots))
	}
	if _, ok := s.get("queue/b/1"); ok {
		t.Fatal("empty set found a key")
	}
}
