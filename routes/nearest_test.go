package routes

import (
	"slices"
	"testing"
	"time"
)

// Brokers are served nearest first by the round trip to the agent they
// registered on; unknown distances come last.
func TestTopicRouteNearestFirst(t *testing.T) {
	self := NewTable("self", 1)
	for _, o := range []struct{ origin, broker string }{{"far", "bFar"}, {"near", "bNear"}, {"unknown", "bUnknown"}} {
		peer := NewTable(o.origin, 1)
		d, _ := peer.ApplyLocal([]Record{
			{Broker: &Broker{Cluster: "c", Name: o.broker, Addr: "10.0.0.1:10911"}},
			{Queue: &Queue{Topic: "T", BrokerName: o.broker, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}},
		}, nil)
		self.Apply(d)
	}
	rtt := map[string]time.Duration{"far": 50 * time.Millisecond, "near": time.Millisecond}
	route, ok := self.TopicRoute("T")
	if !ok {
		t.Fatal("no route for T")
	}
	route.NearestFirst(func(o string) (time.Duration, bool) { d, ok := rtt[o]; return d, ok })
	var got []string
	for _, bd := range route.BrokerDatas {
		got = append(got, bd.BrokerName)
	}
	if want := []string{"bNear", "bFar", "bUnknown"}; !slices.Equal(got, want) {
		t.Fatalf("brokers %v, want %v", got, want)
	}
}
