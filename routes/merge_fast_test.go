package routes

import (
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The fast path of Merge (no scan for unlisted keys where clearOK shows
// none) must leave every table exactly as the full path does. Two
// replicas get the same history: some of the origin's deltas (so a
// replica may hold keys the origin has since deleted, tombstones it
// missed), maybe an older incarnation's records (retired), then the
// origin's own snapshot in parts, in key order or shuffled, with later
// deltas arriving between parts, and maybe a second copy after changes
// they missed. One merges with the fast path, one
// without; their records, tombstones, digests and query answers must
// match after every step, and at the end both must hold the origin's
// records. (Turning the fast path on regardless of clearOK fails this.)
func TestMergeFastPathMatchesFullPath(t *testing.T) {
	checkMergePaths(t, func() { mergeFastPath = true }, func() { mergeFastPath = false }, true)
}

// The scan of an authoritative part's range through the ordered key index
// (unlisted.go) must remove exactly what the scan of every live key does,
// with the fast path off so every part scans.
func TestMergeSortedScanMatchesFullScan(t *testing.T) {
	checkMergePaths(t, func() { mergeFastPath, mergeSortedScan = false, true },
		func() { mergeFastPath, mergeSortedScan = false, false }, false)
}

// checkMergePaths gives two replicas the same histories, one merging with
// the paths a sets, the other with those b sets, and compares them after
// every step; countFast requires the fast path to have been taken.
func checkMergePaths(t *testing.T, a, b func(), countFast bool) {
	defer func(n int) { mergeFastPath, mergeSortedScan, maxTombstones = true, true, n }(maxTombstones)
	// Few tombstones: the origin forgets deletes, so only the scan can
	// remove what a replica holds of them.
	maxTombstones = 4
	fastUsed := 0
	for seed := int64(1); seed <= 400; seed++ {
		rng := rand.New(rand.NewSource(seed))
		fast, full := NewTable("r", 1), NewTable("r", 1)
		both := func(f func(tb *Table)) {
			a()
			f(fast)
			b()
			f(full)
			a()
		}
		inc := uint64(1)
		if rng.Intn(3) == 0 { // an older incarnation's records, to be retired
			old := NewTable("o", 1)
			old.ApplyLocal(randomPuts(rng), nil)
			old.ApplyLocal(randomPuts(rng), nil)
			s, _ := old.Snapshot("o")
			both(func(tb *Table) { tb.Merge(s) })
			inc = 2
		}
		o := NewTable("o", inc)
		var deltas []Delta
		for range 2 + rng.Intn(30) {
			if d, ok := o.ApplyLocal(randomPuts(rng), randomDeletes(rng)); ok {
				deltas = append(deltas, d)
			}
		}
		early := rng.Intn(2) == 0 // else the snapshot is the replica's first copy
		for _, d := range deltas {
			if early && rng.Intn(3) == 0 {
				both(func(tb *Table) { tb.Apply(d) })
			}
		}
		// One copy in parts; then, half the time, the origin changes
		// (deletes whose tombstones it may forget) without the replicas
		// hearing, and a second copy in parts must settle it.
		for round := range 2 {
			if round == 1 {
				if rng.Intn(2) == 0 {
					break
				}
				for range 1 + rng.Intn(10) {
					o.ApplyLocal(randomPuts(rng), randomDeletes(rng))
				}
			}
			var parts []Snapshot
			o.EncodeBinaryParts("o", 1+rng.Intn(300), func(p []byte) {
				s, err := DecodeBinaryPart(p)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, s)
			})
			if rng.Intn(2) == 0 {
				rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			}
			for i, p := range parts {
				if rng.Intn(8) == 0 { // a later change arrives between parts
					if d, ok := o.ApplyLocal(randomPuts(rng), randomDeletes(rng)); ok {
						both(func(tb *Table) { tb.Apply(d) })
					}
				}
				if st := fast.origins["o"]; st != nil && st.unclaimed(keyRange{p.Lo, p.Hi}) {
					fastUsed++
				}
				var rf, rs Result
				a()
				rf = fast.Merge(p)
				b()
				rs = full.Merge(p)
				a()
				if rf != rs {
					t.Fatalf("seed %d, round %d, part %d [%q, %q): fast path %+v, full path %+v", seed, round, i, p.Lo, p.Hi, rf, rs)
				}
				if err := sameTables(fast, full); err != nil {
					t.Fatalf("seed %d, round %d, after part %d [%q, %q): %v", seed, round, i, p.Lo, p.Hi, err)
				}
			}
		}
		// Whatever changed between parts, a final snapshot settles it.
		s, _ := o.Snapshot("o")
		both(func(tb *Table) { tb.Merge(s) })
		if err := sameTables(fast, full); err != nil {
			t.Fatalf("seed %d, at the end: %v", seed, err)
		}
		if got, want := liveRecords(fast, "o"), liveRecords(o, "o"); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: replica holds %d records, origin %d", seed, len(got), len(want))
		}
	}
	t.Logf("fast path taken for %d parts", fastUsed)
	if countFast && fastUsed < 400 {
		t.Fatalf("the fast path was taken for only %d parts: the test does not exercise it", fastUsed)
	}
}

// sameTables compares two replicas: every origin's records and
// tombstones (as its snapshot), digests, and query answers.
func sameTables(a, b *Table) error {
	if !reflect.DeepEqual(a.Origins(), b.Origins()) {
		return fmt.Errorf("origins %v and %v", a.Origins(), b.Origins())
	}
	for _, o := range a.Origins() {
		sa, _ := a.Snapshot(o)
		sb, _ := b.Snapshot(o)
		for _, s := range []*Snapshot{&sa, &sb} {
			slices.SortFunc(s.Ops, func(x, y Op) int { return strings.Compare(x.Key, y.Key) })
		}
		if !reflect.DeepEqual(sa, sb) {
			return fmt.Errorf("origin %s: %d ops and %d differ", o, len(sa.Ops), len(sb.Ops))
		}
	}
	if !reflect.DeepEqual(a.Digest(), b.Digest()) {
		return fmt.Errorf("digests differ")
	}
	return checkViewsAgree([]*simNode{{name: "fast", t: a}, {name: "full", t: b}})
}

// A part that lists a key past its own range (only a malformed or hostile
// sender's does) must not let the next part skip its scan: the key it put
// lies in that part's range, unlisted there, so it goes.
func TestMergeFastPathDistrustsKeysOutsideThePart(t *testing.T) {
	r := NewTable("r", 1)
	a, z, n := queue("b", "a", 1), queue("b", "z", 1), queue("b", "n", 1)
	r.Merge(Snapshot{Origin: "o", Inc: 1, Seq: 5, Authoritative: true, Hi: "queue/b/m",
		Ops: []Op{{Key: a.Key(), Seq: 1, Rec: &a}, {Key: z.Key(), Seq: 2, Rec: &z}}})
	r.Merge(Snapshot{Origin: "o", Inc: 1, Seq: 5, Authoritative: true, Lo: "queue/b/m",
		Ops: []Op{{Key: n.Key(), Seq: 3, Rec: &n}}})
	got := slices.Sorted(maps.Keys(liveRecords(r, "o")))
	if want := []string{a.Key(), n.Key()}; !slices.Equal(got, want) {
		t.Fatalf("replica holds %v, want %v", got, want)
	}
}
