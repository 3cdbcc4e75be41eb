package host

import (
	"errors"
	"testing"

	"github.com/namecast/namecast/routes"
)

// A change of our own records is gossiped once, in the order applied; one
// that changes nothing is not.
func TestApplyPublishesChanges(t *testing.T) {
	table := routes.NewTable("self", 1)
	var published []routes.Delta
	h := New(Config{Table: table, Publish: func(d routes.Delta) { published = append(published, d) }})
	b := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "b", Addr: "10.0.0.1:10911"}}
	if ok, _ := h.Apply([]routes.Record{b}, nil); !ok {
		t.Fatal("a new record changed nothing")
	}
	if ok, _ := h.Apply([]routes.Record{b}, nil); ok {
		t.Fatal("the same record again changed something")
	}
	if ok, _ := h.Apply(nil, []string{b.Key()}); !ok {
		t.Fatal("deleting it changed nothing")
	}
	if len(published) != 2 || len(published[0].Ops) != 1 || len(published[1].Ops) != 1 || published[1].Ops[0].Rec != nil {
		t.Fatalf("published %+v, want the put then the delete", published)
	}
	if got := h.LocalRecords(""); len(got) != 0 {
		t.Fatalf("local records after the delete: %v", got)
	}
}

// A rule write goes through the agent's rule store, whose error is the
// door's answer; without one it changes the table and is gossiped.
func TestApplyRulesGoesThroughTheRuleStore(t *testing.T) {
	kv := routes.Record{KV: &routes.KV{Namespace: "ns", Key: "k", Value: "v"}}
	full := errors.New("rules full")
	h := New(Config{Table: routes.NewTable("self", 1), Rules: func([]routes.Record, []string) (bool, error) { return false, full }})
	if ok, err := h.ApplyRules([]routes.Record{kv}, nil); ok || err != full {
		t.Fatalf("ApplyRules = %v, %v; want the store's error", ok, err)
	}
	var published int
	bare := New(Config{Table: routes.NewTable("self", 1), Publish: func(routes.Delta) { published++ }})
	if ok, err := bare.ApplyRules([]routes.Record{kv}, nil); !ok || err != nil || published != 1 {
		t.Fatalf("ApplyRules = %v, %v, published %d; want one change gossiped", ok, err, published)
	}
	if bare.Table().KVs("ns")["k"] != "v" {
		t.Fatal("the rule is not in the table")
	}
}
