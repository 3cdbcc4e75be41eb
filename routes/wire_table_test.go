package routes

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// encodeParts collects what encode emits, each part copied (emit's slice
// is reused).
func encodeParts(encode func(emit func([]byte))) [][]byte {
	var out [][]byte
	encode(func(p []byte) { out = append(out, slices.Clone(p)) })
	return out
}

// Table.EncodeBinaryParts must send exactly the bytes the snapshot path
// sends (the format's golden test pins those): same parts, same bounds,
// for the origin itself (authoritative), a replica, and the rules with
// their writers, through random puts, deletes (tombstones) and rewrites.
func TestTableEncodeMatchesSnapshotEncode(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		o, replica := NewTable("o", 1), NewTable("r", 1)
		for range 1 + rng.Intn(40) {
			if d, ok := o.ApplyLocal(randomPuts(rng), randomDeletes(rng)); ok {
				replica.Apply(d)
			}
			k := URLKey("I", "routers", fmt.Sprintf("route://0.0.0.0/I?r=%d", rng.Intn(4)))
			var d Delta
			var ok bool
			if rng.Intn(3) == 0 {
				d, ok = o.ApplyRules(nil, []string{k})
			} else {
				d, ok = o.ApplyRules([]Record{{URL: &URL{Interface: "I", Category: "routers", URL: k[len("url/I/routers/"):]}}}, nil)
			}
			if ok {
				replica.Apply(d)
			}
		}
		for _, c := range []struct {
			tb     *Table
			origin string
		}{{o, "o"}, {replica, "o"}, {o, RulesOrigin}, {replica, RulesOrigin}} {
			for _, limit := range []int{1, 64, 700, 1 << 20} {
				s, sok := c.tb.Snapshot(c.origin)
				want := encodeParts(func(emit func([]byte)) { s.EncodeBinaryParts(limit, emit) })
				var ok bool
				got := encodeParts(func(emit func([]byte)) { ok = c.tb.EncodeBinaryParts(c.origin, limit, emit) })
				if ok != sok {
					t.Fatalf("seed %d, %s of %s: ok %v, snapshot's %v", seed, c.tb.Local(), c.origin, ok, sok)
				}
				if !ok {
					if len(got) > 0 {
						t.Fatalf("seed %d: %d parts emitted for an origin the table does not hold", seed, len(got))
					}
					continue
				}
				if len(got) != len(want) {
					t.Fatalf("seed %d, %s of %s, limit %d: %d parts, the snapshot path %d", seed, c.tb.Local(), c.origin, limit, len(got), len(want))
				}
				for i := range got {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("seed %d, %s of %s, limit %d: part %d differs", seed, c.tb.Local(), c.origin, limit, i)
					}
				}
			}
		}
	}
	if NewTable("x", 1).EncodeBinaryParts("nobody", 1<<20, func([]byte) { t.Fatal("emitted a part of an origin the table does not hold") }) {
		t.Fatal("ok for an origin the table does not hold")
	}
}

// BenchmarkEncodeOriginFromTable is BenchmarkEncodeOrigin's answer
// encoded from the table, without a snapshot.
func BenchmarkEncodeOriginFromTable(b *testing.B) {
	origin := brokerOrigin("o", 50)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		origin.EncodeBinaryParts("o", 256<<10, func(p []byte) { n += len(p) })
	}
}

// A PartDecoder reused across parts must decode each exactly as a fresh
// decoder does: its reused records and ops hold the previous part's
// fields until overwritten, and a field absent from the new part must
// come back zero, not the old value.
func TestPartDecoderReuseMatchesFresh(t *testing.T) {
	var d PartDecoder
	for seed := range 30 {
		rng := rand.New(rand.NewSource(int64(seed)))
		s := Snapshot{Origin: fmt.Sprintf("o%d", seed), Inc: uint64(seed), Seq: 1 << 40, Authoritative: seed%2 == 0}
		for i := range 1 + rng.Intn(600) {
			switch rng.Intn(4) {
			case 0: // every field set
				r := everyKind(rng.Intn(1000))[rng.Intn(6)]
				s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("k/%05d", i), Seq: uint64(i + 1), Rec: &r})
			case 1: // mostly zero fields
				r := []Record{{Queue: &Queue{Topic: "t"}}, {Broker: &Broker{Name: "b"}}, {URL: &URL{URL: "u"}}}[rng.Intn(3)]
				s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("k/%05d", i), Seq: uint64(i + 1), Rec: &r})
			default:
				s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("k/%05d", i), Seq: uint64(i + 1), Writer: []string{"", "w"}[rng.Intn(2)]})
			}
		}
		s.EncodeBinaryParts(1+rng.Intn(4096), func(p []byte) {
			want, werr := DecodeBinaryPart(p)
			got, gerr := d.Decode(p)
			if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d: reused decoder gave %+v (%v), a fresh one %+v (%v)", seed, got, gerr, want, werr)
			}
		})
		// A part that fails leaves the decoder usable.
		if _, err := d.Decode([]byte{0xff}); err == nil {
			t.Fatal("decoded a malformed part")
		}
	}
}
