package routes

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
)

// A snapshot split into parts, merged in any order, leaves a replica
// exactly where the whole snapshot would: each authoritative part removes
// the stale keys of its own range only.
func TestSplitSnapshotMergesLikeTheWhole(t *testing.T) {
	origin, replica := NewTable("a", 1), NewTable("b", 1)
	var recs []Record
	for i := range 1000 {
		recs = append(recs, queue(fmt.Sprintf("b%d", i%7), fmt.Sprintf("T%04d", i), 4))
	}
	d, _ := origin.ApplyLocal(recs, nil)
	replica.Apply(d)
	// Deletes the replica misses, across every range and at both ends
	// (0 and 999 = 27·37).
	var gone []string
	for i := 0; i < 1000; i += 37 {
		gone = append(gone, recs[i].Key())
	}
	origin.ApplyLocal(nil, gone)
	origin.ApplyLocal([]Record{queue("b0", "U", 4)}, nil)

	snap, _ := origin.Snapshot("a")
	const limit = 4 << 10
	parts, sizes := snap.Split(limit)
	if len(parts) < 10 {
		t.Fatalf("split into %d parts, want many of %d bytes", len(parts), limit)
	}
	total := 0
	for i, p := range parts {
		b, _ := json.Marshal(p.Ops)
		if len(b) > limit+200 || sizes[i] < len(b)-1 {
			t.Fatalf("part %d encodes to %d bytes (said %d), over the %d limit", i, len(b), sizes[i], limit)
		}
		total += len(p.Ops)
	}
	if total != len(snap.Ops) {
		t.Fatalf("parts hold %d ops, the snapshot %d", total, len(snap.Ops))
	}
	rand.New(rand.NewSource(1)).Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	for _, p := range parts {
		replica.Merge(p)
	}
	if got, want := replica.Digest()["a"], origin.Digest()["a"]; got.Hash != want.Hash || got.Seq != want.Seq {
		t.Fatalf("replica after the parts: %+v, origin: %+v", got, want)
	}
	if _, n := replica.Len(); n != len(recs)-len(gone)+1 {
		t.Fatalf("replica holds %d records, want %d", n, len(recs)-len(gone)+1)
	}
}

func TestSplitEmptySnapshotIsOneOpenPart(t *testing.T) {
	parts, _ := Snapshot{Origin: "a", Inc: 1, Seq: 5, Authoritative: true}.Split(100)
	if len(parts) != 1 || parts[0].Lo != "" || parts[0].Hi != "" {
		t.Fatalf("parts of an empty snapshot: %+v", parts)
	}
}

// The bound that lets small snapshots skip sorting and encoding is never
// below the real encoded size, even for strings JSON escapes.
func TestOpSizeBoundIsAnUpperBound(t *testing.T) {
	recs := []Record{
		broker("c<&>", "b\x01", 1, "10.0.0.1:10911"),
		queue("b1", "T\u2028", 4),
		rule("I", "route://0.0.0.0/I?a=1&b=<2>"),
		{KV: &KV{Namespace: "n", Key: "k", Value: "\x00\x01\"\\"}},
		{Znode: &Znode{Path: "/a/b", Data: []byte("\xff\x00data")}},
	}
	for _, r := range recs {
		op := Op{Key: r.Key(), Seq: 1 << 60, Rec: &r, Writer: "w@1"}
		if b, _ := json.Marshal(op); opSizeBound(op) < len(b) {
			t.Errorf("bound %d under the encoded %d bytes of %+v", opSizeBound(op), len(b), r)
		}
	}
}

// EncodeParts, the sender's path, makes exactly Split's parts: the same
// ops, ranges and header, whether the snapshot fits in one part or not.
func TestEncodePartsDecodeToSplitParts(t *testing.T) {
	origin := NewTable("a", 3)
	var recs []Record
	for i := range 500 {
		recs = append(recs, queue(fmt.Sprintf("b<%d>", i%5), fmt.Sprintf("T&%04d", i), 4))
	}
	origin.ApplyLocal(recs, nil)
	origin.ApplyLocal(nil, []string{recs[3].Key(), recs[400].Key()})
	snap, _ := origin.Snapshot("a")
	for _, limit := range []int{1, 2 << 10, 16 << 10, 1 << 20} {
		want, _ := snap.Split(limit)
		var got []Snapshot
		err := snap.EncodeParts(limit, func(b []byte) {
			var p Snapshot
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("limit %d: part %d does not decode: %v", limit, len(got), err)
			}
			got = append(got, p)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("limit %d: %d parts, Split made %d", limit, len(got), len(want))
		}
		for i := range want {
			w, _ := json.Marshal(want[i])
			g, _ := json.Marshal(got[i])
			if string(w) != string(g) {
				t.Fatalf("limit %d, part %d:\n got %.300s\nwant %.300s", limit, i, g, w)
			}
		}
	}
}
