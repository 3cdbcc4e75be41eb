package routes

import (
	"testing"
)

func TestCatalogViews(t *testing.T) {
	tb := NewTable("a", 7)
	tb.ApplyLocal([]Record{
		{Broker: &Broker{Cluster: "C", Name: "b1", ID: 0, Addr: "192.0.2.1:10911"}},
		{Queue: &Queue{Topic: "T", BrokerName: "b1", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
	}, nil)
	other := NewTable("z", 9)
	d, _ := other.ApplyLocal([]Record{{Broker: &Broker{Cluster: "C", Name: "b1", ID: 1, Addr: "192.0.2.2:10911"}}}, nil)
	d.Inc = 9
	if res := tb.Apply(d); res.Applied != 1 {
		t.Fatalf("apply: %+v", res)
	}
	tb.ApplyRules([]Record{{KV: &KV{Namespace: "ns", Key: "k2", Value: "v"}}}, nil)
	tb.ApplyRules([]Record{{KV: &KV{Namespace: "ns", Key: "k1", Value: "v"}}}, nil)

	stats := tb.OriginStats()
	want := []OriginStat{{"a", 7, 2, 2}, {"z", 9, 1, 1}, {RulesOrigin, 0, 0, 2}}
	if len(stats) != 3 {
		t.Fatalf("stats %+v", stats)
	}
	for i, w := range want {
		if stats[i].Origin != w.Origin || stats[i].Inc != w.Inc || stats[i].Records != w.Records {
			t.Errorf("stat %d = %+v, want %+v", i, stats[i], w)
		}
	}

	rules := tb.Rules()
	if len(rules) != 2 || rules[0].Key != KVKey("ns", "k2") || rules[1].Key != KVKey("ns", "k1") {
		t.Fatalf("rules not in write order: %+v", rules)
	}
	if rules[0].Time >= rules[1].Time || rules[0].Writer != "a@7" || rules[0].Record.KV.Value != "v" {
		t.Errorf("rule 0 = %+v", rules[0])
	}

	bs := tb.BrokerEntries()
	if len(bs) != 2 || bs[0].ID != 0 || bs[0].Origin != "a" || bs[1].ID != 1 || bs[1].Origin != "z" {
		t.Fatalf("brokers %+v", bs)
	}
}
