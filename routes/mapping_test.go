package routes

import (
	"encoding/json"
	"testing"
)

// Static-topic mappings travel in snapshots like any record, and a route
// lists one per broker name: the master's over a prime slave's, then the
// higher epoch, whichever agents hold them.
func TestMappingsReplicateAndRank(t *testing.T) {
	mapping := func(from, epoch int64, ids string) Record {
		return Record{Mapping: &Mapping{Topic: "S", BrokerName: "broker-a", Scope: "__global__", TotalQueues: 2,
			Epoch: epoch, IDs: ids, From: from}}
	}
	joiner := NewTable("joiner", 1)
	for _, src := range []struct {
		agent string
		rec   Record
	}{
		{"agent-1", mapping(1, 9, "0:0,1:1")}, // a prime slave's, newer epoch
		{"agent-2", mapping(0, 5, "0:0,1:2")}, // the master's
		{"agent-3", mapping(0, 7, "0:3,1:4")}, // the master's, a later epoch, on another agent
	} {
		tbl := NewTable(src.agent, 1)
		if _, ok := tbl.ApplyLocal([]Record{src.rec}, nil); !ok {
			t.Fatalf("%s: mapping %+v refused", src.agent, src.rec.Mapping)
		}
		snap, _ := tbl.Snapshot(src.agent)
		buf, _ := json.Marshal(snap)
		var wire Snapshot
		if err := json.Unmarshal(buf, &wire); err != nil {
			t.Fatal(err)
		}
		if res := joiner.Merge(wire); res.Applied != 1 {
			t.Fatalf("merge of %s: %+v", buf, res)
		}
	}
	got := joiner.Mappings("S")
	if m := got["broker-a"]; len(got) != 1 || m.Epoch != 7 || m.IDs != "0:3,1:4" {
		t.Fatalf("mappings %+v, want the master's epoch 7", got)
	}
	m := got["broker-a"]
	if ids, err := m.CurrIDs(); err != nil || ids[0] != 3 || ids[1] != 4 {
		t.Fatalf("ids %v %v", ids, err)
	}
	if joiner.Mappings("other") != nil {
		t.Fatal("a topic without mappings has some")
	}
	if FormatMappingIDs(map[int32]int32{10: 1, 2: 0, -1: 7}) != "-1:7,2:0,10:1" {
		t.Fatal("ids not in logical order")
	}
	// A remote op with unreadable ids is invalid, and changes nothing.
	bad := mapping(0, 8, "0:zero")
	if res := joiner.Apply(Delta{Origin: "agent-4", Inc: 1, Ops: []Op{{Key: bad.Key(), Seq: 1, Rec: &bad}}}); res.Invalid != 1 {
		t.Fatalf("bad ids: %+v", res)
	}
}
