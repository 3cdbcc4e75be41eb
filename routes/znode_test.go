package routes

import (
	"encoding/json"
	"sort"
	"testing"
)

func TestZnodeRecordKeysAndRoundTrip(t *testing.T) {
	z := Record{Znode: &Znode{Path: "/dubbo/config/dubbo/a.configurators", Data: []byte("x: 1"), Version: 2, Ctime: 5, Mtime: 6}}
	if got := z.Key(); got != "znode/dubbo/config/dubbo/a.configurators" {
		t.Fatalf("key %q", got)
	}
	part := Record{Znode: &Znode{Path: "/dubbo/mapping/demo.Api", Part: "agent-1", Data: []byte("app")}}
	if got := part.Key(); got != "znode/dubbo/mapping/demo.Api\x00agent-1" {
		t.Fatalf("part key %q", got)
	}
	for _, k := range []string{z.Key(), part.Key()} {
		if p, ok := ZnodePathOfKey(k); !ok || p[0] != '/' || p == "" || len(p) > len(k) {
			t.Fatalf("path of %q = %q %v", k, p, ok)
		}
	}
	b, err := json.Marshal(z)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || !back.equal(z) || !back.valid() {
		t.Fatalf("round trip %s -> %+v (%v)", b, back.Znode, err)
	}
	if (Record{Znode: &Znode{Path: "relative"}}).valid() || (Record{Znode: &Znode{Path: "/a\x00b"}}).valid() {
		t.Fatal("invalid znode paths accepted")
	}
	c := z.clone()
	c.Znode.Data[0] = 'y'
	if z.Znode.Data[0] != 'x' {
		t.Fatal("clone shares data")
	}
}

func TestHoldersKeysAndOnChange(t *testing.T) {
	a := NewTable("a", 1)
	var changed []string
	a.OnChange(func(k string) { changed = append(changed, k) })
	u := Record{URL: &URL{Interface: "demo.Api", Category: "providers", URL: "dubbo://10.0.0.1:1/demo.Api"}}
	a.ApplyLocal([]Record{u}, nil)
	b := NewTable("b", 1)
	d, _ := b.ApplyLocal([]Record{u}, nil)
	a.Apply(d)
	rd, _ := a.ApplyRules([]Record{{Znode: &Znode{Path: "/dubbo/mapping/x", Part: "a", Data: []byte("app1")}}}, nil)
	_ = rd
	held := a.Holders(u.Key())
	origins := []string{}
	for _, h := range held {
		origins = append(origins, h.Origin)
	}
	sort.Strings(origins)
	if len(origins) != 2 || origins[0] != "a" || origins[1] != "b" {
		t.Fatalf("holders %v", origins)
	}
	if got := a.RulesWithPrefix(ZnodePartsPrefix("/dubbo/mapping/x")); len(got) != 1 {
		t.Fatalf("rule parts %v", got)
	}
	if keys := a.Keys("url/"); len(keys) != 1 {
		t.Fatalf("distinct url keys %v", keys)
	}
	a.DropOrigin("b", 1)
	want := []string{u.Key(), u.Key(), "znode/dubbo/mapping/x\x00a", u.Key()}
	if len(changed) != len(want) {
		t.Fatalf("OnChange heard %q, want %q", changed, want)
	}
	for i := range want {
		if changed[i] != want[i] {
			t.Fatalf("OnChange heard %q, want %q", changed, want)
		}
	}
}

// Null and empty data stay apart through JSON (gossip) and the table.
func TestZnodeNullVersusEmptyData(t *testing.T) {
	for _, data := range [][]byte{nil, {}} {
		r := Record{Znode: &Znode{Path: "/x", Data: data}}
		b, _ := json.Marshal(r)
		var back Record
		if err := json.Unmarshal(b, &back); err != nil || (back.Znode.Data == nil) != (data == nil) {
			t.Fatalf("%q: JSON %s -> %#v (%v)", data, b, back.Znode.Data, err)
		}
		tb := NewTable("a", 1)
		tb.ApplyLocal([]Record{back}, nil)
		got := tb.Holders(r.Key())[0].Rec.Znode.Data
		if (got == nil) != (data == nil) {
			t.Fatalf("%q: table holds %#v", data, got)
		}
	}
}

// A URL or znode record's stamp moves the receiving table's Lamport clock
// past it, as a broker's does: a record written after one was seen is
// stamped later, so "the later wins" orders them alike everywhere.
func TestURLAndZnodeStampsAreWitnessed(t *testing.T) {
	for _, rec := range []Record{
		{URL: &URL{Interface: "demo.Api", Category: "providers", URL: "dubbo://10.0.0.1:1/demo.Api", Owner: 7, Stamp: 1000}},
		{Znode: &Znode{Path: "/x", Owner: 7, Stamp: 1000}},
	} {
		a, b := NewTable("a", 1), NewTable("b", 1)
		d, _ := a.ApplyLocal([]Record{rec}, nil)
		b.Apply(d)
		if s := b.Stamp(); s <= 1000 {
			t.Fatalf("%s: b's next stamp %d after seeing 1000", rec.Key(), s)
		}
		c := NewTable("c", 1) // a record restored from a lease keeps its stamp
		c.ApplyLocal([]Record{rec}, nil)
		if s := c.Stamp(); s <= 1000 {
			t.Fatalf("%s: c's next stamp %d after applying 1000 locally", rec.Key(), s)
		}
	}
}
