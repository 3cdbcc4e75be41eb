package routes

import (
	"encoding/hex"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fillAll sets every field of the struct v points to a non-zero value
// derived from seed: a field the codec forgets then fails the round trip.
func fillAll(v any, seed int) {
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(fmt.Sprintf("%s-%d", rv.Type().Field(i).Name, seed))
		case reflect.Int, reflect.Int32, reflect.Int64:
			f.SetInt(int64(-(seed + i + 1)) * 3)
		case reflect.Uint64:
			f.SetUint(uint64(seed+i+1) << 40)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.SetBytes([]byte{0, byte(seed), 0xff})
		default:
			panic(fmt.Sprintf("fillAll: field %s of kind %v: teach the codec (wire.go) and this test", rv.Type().Field(i).Name, f.Kind()))
		}
	}
}

// everyKind has one record of each kind with every field set, so a field
// added to a record type without a field number in wire.go fails here.
func everyKind(seed int) []Record {
	b, q, u, kv, z, m := &Broker{}, &Queue{}, &URL{}, &KV{}, &Znode{}, &Mapping{}
	for _, p := range []any{b, q, u, kv, z, m} {
		fillAll(p, seed)
	}
	out := []Record{{Broker: b}, {Queue: q}, {URL: u}, {KV: kv}, {Znode: z}, {Mapping: m}}
	if n := reflect.TypeOf(Record{}).NumField(); n != len(out) {
		panic(fmt.Sprintf("Record has %d kinds, the codec test %d: give the new kind a number in wire.go", n, len(out)))
	}
	return out
}

func decodeAll(t *testing.T, s Snapshot, maxBytes int) (parts []Snapshot) {
	t.Helper()
	s.EncodeBinaryParts(maxBytes, func(b []byte) {
		p, err := DecodeBinaryPart(b)
		if err != nil {
			t.Fatalf("decoding part %d: %v", len(parts), err)
		}
		parts = append(parts, p)
	})
	return parts
}

func TestBinaryPartsRoundTripEveryField(t *testing.T) {
	s := Snapshot{Origin: "a", Inc: 7, Seq: 1 << 50, Authoritative: true}
	for i := range 50 {
		for j, r := range everyKind(i) {
			s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("k/%03d/%d", i, j), Seq: uint64(i + 1), Rec: &r})
		}
		s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("gone/%03d", i), Seq: 9, Writer: "w"})
	}
	// Nil and empty znode data differ.
	s.Ops = append(s.Ops, Op{Key: "z/nil", Seq: 1, Rec: &Record{Znode: &Znode{Path: "/n"}}},
		Op{Key: "z/empty", Seq: 1, Rec: &Record{Znode: &Znode{Path: "/n", Data: []byte{}}}})
	want := slices.Clone(s.Ops)
	slices.SortFunc(want, func(a, b Op) int { return strings.Compare(a.Key, b.Key) })

	for _, limit := range []int{1 << 30, 2 << 10, 1} {
		parts := decodeAll(t, s, limit)
		var got []Op
		lo := ""
		for i, p := range parts {
			if p.Origin != s.Origin || p.Inc != s.Inc || p.Seq != s.Seq || p.Authoritative != s.Authoritative {
				t.Fatalf("limit %d, part %d: header %+v", limit, i, p)
			}
			if p.Lo != lo || (i == len(parts)-1) != (p.Hi == "") {
				t.Fatalf("limit %d, part %d covers [%q, %q) after %q", limit, i, p.Lo, p.Hi, lo)
			}
			for _, op := range p.Ops {
				if !p.Covers(op.Key) {
					t.Fatalf("limit %d: part [%q, %q) lists %q", limit, p.Lo, p.Hi, op.Key)
				}
			}
			lo = p.Hi
			got = append(got, p.Ops...)
		}
		if limit == 1 && len(parts) != len(want) {
			t.Fatalf("a 1-byte limit made %d parts of %d ops", len(parts), len(want))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d: round trip differs\n got %+v\nwant %+v", limit, got, want)
		}
		if z := got[len(got)-1]; z.Key != "z/nil" || z.Rec.Znode.Data != nil {
			t.Fatalf("nil znode data came back as %#v", z.Rec.Znode.Data)
		}
	}
}

// The encoding is a wire format between agents of different versions:
// this is version 1's exact bytes. If this test fails, the change breaks
// mixed clusters unless BinaryVersion moves (and pulls negotiate it).
func TestBinaryPartGolden(t *testing.T) {
	s := Snapshot{Origin: "nc-1", Inc: 3, Seq: 300, Authoritative: true, Ops: []Op{
		{Key: QueueKey("b", "T1"), Seq: 299, Rec: &Record{Queue: &Queue{Topic: "T1", BrokerName: "b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}}},
		{Key: QueueKey("b", "T2"), Seq: 300},
		{Key: BrokerKey("b", 0), Seq: 1, Rec: &Record{Broker: &Broker{Cluster: "c", Name: "b", Addr: "h:1", Stamp: 5}}},
	}}
	var got []string
	s.EncodeBinaryParts(1<<20, func(b []byte) { got = append(got, hex.EncodeToString(b)) })
	want := "046e632d3103ac0201000003" + // origin, inc 3, seq 300, authoritative, open range, 3 ops
		"000a62726f6b65722f622f30" + "01" + "00" + "01" + "0d" + "060163" + "0a0162" + "1203683a31" + "2805" + // broker/b/0
		"000a71756575652f622f5431" + "ab02" + "00" + "02" + "0d" + "06025431" + "0a0162" + "0d10" + "1110" + "150c" + // queue/b/T1
		"090132" + "ac02" + "00" + "00" // queue/b/T2, shares "queue/b/T", deleted
	if len(got) != 1 || got[0] != want {
		t.Fatalf("version 1 encoding changed:\n got %v\nwant [%s]", got, want)
	}
	p, err := DecodeBinaryPart(mustHex(want))
	if err != nil || len(p.Ops) != 3 || p.Ops[1].Rec.Queue.Topic != "T1" || p.Ops[2].Rec != nil {
		t.Fatalf("decoding the golden part: %+v, %v", p, err)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Merging the decoded parts, in any order, leaves a replica where the
// snapshot itself would: same digest, same records.
func TestBinaryPartsMergeLikeTheSnapshot(t *testing.T) {
	origin, viaSnap, viaWire := NewTable("a", 1), NewTable("b", 1), NewTable("c", 1)
	var recs []Record
	for i := range 3000 {
		recs = append(recs, queue(fmt.Sprintf("broker-%d", i%7), fmt.Sprintf("topic-%05d", i), 4))
	}
	recs = append(recs, Record{Broker: &Broker{Cluster: "c", Name: "broker-1", Addr: "h:1"}})
	origin.ApplyLocal(recs, nil)
	var gone []string
	for i := 0; i < len(recs)-1; i += 41 {
		gone = append(gone, recs[i].Key())
	}
	origin.ApplyLocal(nil, gone)
	snap, _ := origin.Snapshot("a")
	viaSnap.Merge(snap)
	parts := decodeAll(t, snap, 8<<10)
	if len(parts) < 5 {
		t.Fatalf("%d parts, want several", len(parts))
	}
	rand.New(rand.NewSource(1)).Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	for _, p := range parts {
		if res := viaWire.Merge(p); res.Invalid > 0 {
			t.Fatalf("a decoded part had %d invalid ops", res.Invalid)
		}
	}
	if got, want := viaWire.Digest()["a"], viaSnap.Digest()["a"]; got != want {
		t.Fatalf("after the decoded parts %+v, after the snapshot %+v", got, want)
	}
	if !reflect.DeepEqual(viaWire.Topics(), viaSnap.Topics()) || !reflect.DeepEqual(viaWire.Queues("broker-3"), viaSnap.Queues("broker-3")) {
		t.Fatal("the topic lists or queues differ")
	}
}

// Every truncation of a valid part, and every single-byte change, is
// either refused or decodes to something that encodes again: nothing
// panics, nothing reads past the end.
func TestBinaryPartCorruptionIsRefused(t *testing.T) {
	var part []byte
	s := Snapshot{Origin: "a", Inc: 1, Seq: 9}
	for i, r := range everyKind(1) {
		s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("k%d", i), Seq: uint64(i + 1), Rec: &r})
	}
	s.EncodeBinaryParts(1<<20, func(b []byte) { part = slices.Clone(b) })
	for n := range len(part) {
		if _, err := DecodeBinaryPart(part[:n]); err == nil {
			t.Fatalf("a part cut to %d of %d bytes decoded", n, len(part))
		}
	}
	if _, err := DecodeBinaryPart(append(slices.Clone(part), 0)); err == nil {
		t.Fatal("a part with a trailing byte decoded")
	}
	for i := range part {
		for _, v := range []byte{0, 0x7f, 0x80, 0xff} {
			b := slices.Clone(part)
			b[i] = v
			if p, err := DecodeBinaryPart(b); err == nil {
				p.EncodeBinaryParts(1<<20, func([]byte) {})
			}
		}
	}
}

func TestBinaryPartRefusesHugeCounts(t *testing.T) {
	b := appendStr(nil, "a")
	b = append(b, 1, 1, 0, 0, 0)          // inc, seq, flags, lo, hi
	b = append(b, 0xff, 0xff, 0xff, 0x7f) // ~268M ops in no bytes
	if _, err := DecodeBinaryPart(b); err == nil || !strings.Contains(err.Error(), "claims") {
		t.Fatalf("a part claiming 268M ops: %v", err)
	}
}

func FuzzDecodeBinaryPart(f *testing.F) {
	s := Snapshot{Origin: "a", Inc: 1, Seq: 9, Authoritative: true}
	for i, r := range everyKind(2) {
		s.Ops = append(s.Ops, Op{Key: fmt.Sprintf("k%d", i), Seq: uint64(i + 1), Rec: &r})
	}
	s.Ops = append(s.Ops, Op{Key: "k9", Seq: 3, Writer: "w"})
	s.EncodeBinaryParts(1<<20, func(b []byte) { f.Add(slices.Clone(b)) })
	f.Add(mustHex("046e632d3103ac0201000003000a62726f6b65722f622f30010001"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeBinaryPart(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes to the same.
		var again []Op
		p.EncodeBinaryParts(1<<30, func(b []byte) {
			q, err := DecodeBinaryPart(b)
			if err != nil {
				t.Fatalf("re-encoding a decoded part: %v", err)
			}
			again = append(again, q.Ops...)
		})
		want := slices.Clone(p.Ops)
		slices.SortStableFunc(want, func(a, b Op) int { return strings.Compare(a.Key, b.Key) })
		if len(again) != len(want) {
			t.Fatalf("%d ops decoded, %d after a round trip", len(want), len(again))
		}
		// A merge of whatever decoded must not panic either.
		NewTable("me", 1).Merge(p)
	})
}

// BenchmarkJoinMerge is a joiner's side of a sync of 100 brokers × 1000
// topics held by two origins: decode every binary part, merge it.
func BenchmarkJoinMerge(b *testing.B) {
	for _, auth := range []bool{false, true} {
		name := "replica"
		if auth {
			name = "origin" // a joiner pulls the largest origins from themselves
		}
		b.Run(name, func(b *testing.B) { benchJoinMerge(b, auth) })
	}
}

func benchJoinMerge(b *testing.B, auth bool) {
	var parts [][]byte
	for o := range 2 {
		origin := NewTable(fmt.Sprintf("o%d", o), 1)
		var recs []Record
		for br := o; br < 100; br += 2 {
			name := fmt.Sprintf("broker-%03d", br)
			recs = append(recs, Record{Broker: &Broker{Cluster: "c", Name: name, Addr: "127.0.0.1:10911"}})
			for i := range 1000 {
				recs = append(recs, queue(name, fmt.Sprintf("topic-%04d", i), 8))
			}
		}
		origin.ApplyLocal(recs, nil)
		snap, _ := origin.Snapshot(origin.Local())
		snap.Authoritative = auth
		snap.EncodeBinaryParts(256<<10, func(p []byte) { parts = append(parts, slices.Clone(p)) })
	}
	b.ReportAllocs()
	for b.Loop() {
		t := NewTable("joiner", 1)
		var dec PartDecoder
		for i, p := range parts {
			if i%4 == 0 {
				dec = PartDecoder{} // gossip decodes a message (~4 parts) with one
			}
			s, err := dec.Decode(p)
			if err != nil {
				b.Fatal(err)
			}
			t.Merge(s)
		}
	}
}

// BenchmarkEncodeOrigin is a sender's side: one origin of 50 brokers ×
// 1000 topics, from the table to binary parts.
func BenchmarkEncodeOrigin(b *testing.B) {
	origin := brokerOrigin("o", 50)
	b.ReportAllocs()
	for b.Loop() {
		snap, _ := origin.Snapshot("o")
		n := 0
		snap.EncodeBinaryParts(256<<10, func(p []byte) { n += len(p) })
	}
}

// BenchmarkRepullMerge is a replica pulling again an origin it holds (its
// digest differed): 100 brokers × 1000 topics from one origin, every part
// authoritative, merged into a table that has them all. Each part removes
// what it does not list in its range; "full-scan" looks for those among
// every live key, part after part.
func BenchmarkRepullMerge(b *testing.B) {
	origin := brokerOrigin("o", 100)
	snap, _ := origin.Snapshot("o")
	var parts []Snapshot
	snap.EncodeBinaryParts(256<<10, func(p []byte) {
		s, err := DecodeBinaryPart(p)
		if err != nil {
			b.Fatal(err)
		}
		parts = append(parts, s)
	})
	replica := NewTable("r", 1)
	for _, p := range parts {
		replica.Merge(p)
	}
	for _, sorted := range []bool{true, false} {
		name := "index"
		if !sorted {
			name = "full-scan"
		}
		b.Run(fmt.Sprintf("%s-%dparts", name, len(parts)), func(b *testing.B) {
			defer func() { mergeSortedScan = true }()
			mergeSortedScan = sorted
			for b.Loop() {
				for _, p := range parts {
					replica.Merge(p)
				}
			}
		})
	}
}

// brokerOrigin is the table of origin name holding brokers brokers × 1000
// topics of its own, the shape of the join and re-pull benchmarks.
func brokerOrigin(name string, brokers int) *Table {
	origin := NewTable(name, 1)
	var recs []Record
	for br := range brokers {
		b := fmt.Sprintf("broker-%03d", br)
		recs = append(recs, Record{Broker: &Broker{Cluster: "c", Name: b, Addr: "127.0.0.1:10911"}})
		for i := range 1000 {
			recs = append(recs, queue(b, fmt.Sprintf("topic-%04d", i), 8))
		}
	}
	origin.ApplyLocal(recs, nil)
	return origin
}
