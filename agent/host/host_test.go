package host

import (
	"errors"
	"slices"
	"testing"
	"time"

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

// Brokers are served nearest first by the round trip to the agent they
// registered on; unknown distances come last.
func TestTopicRouteNearestFirst(t *testing.T) {
	self := routes.NewTable("self", 1)
	for _, o := range []struct{ origin, broker string }{{"far", "bFar"}, {"near", "bNear"}, {"unknown", "bUnknown"}} {
		peer := routes.NewTable(o.origin, 1)
		d, _ := peer.ApplyLocal([]routes.Record{
			{Broker: &routes.Broker{Cluster: "c", Name: o.broker, Addr: "10.0.0.1:10911"}},
			{Queue: &routes.Queue{Topic: "T", BrokerName: o.broker, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}},
		}, nil)
		self.Apply(d)
	}
	rtt := map[string]time.Duration{"far": 50 * time.Millisecond, "near": time.Millisecond}
	h := New(Config{Table: self, RTT: func(o string) (time.Duration, bool) { d, ok := rtt[o]; return d, ok }})
	route, ok := h.TopicRoute("T")
	if !ok {
		t.Fatal("no route for T")
	}
	var got []string
	for _, bd := range route.BrokerDatas {
		got = append(got, bd.BrokerName)
	}
	if want := []string{"bNear", "bFar", "bUnknown"}; !slices.Equal(got, want) {
		t.Fatalf("brokers %v, want %v", got, want)
	}
}
