package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/bench"
	"github.com/namecast/namecast/routes"
)

// brokerOf is a master broker registration carrying topics, each with the
// queue numbers a default RocketMQ topic has.
func brokerOf(name string, topics ...string) httpapi.BrokerRegistration {
	reg := httpapi.BrokerRegistration{Cluster: "bench", BrokerName: name, BrokerID: 0,
		Addr: "127.0.0.1:10911", HAAddr: "127.0.0.1:10912", Topics: map[string]httpapi.TopicConfig{}}
	for _, t := range topics {
		reg.Topics[t] = httpapi.TopicConfig{ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}
	}
	return reg
}

// payloadOf is what a serf user event carries in place of a registration:
// the same registration's JSON, so both sides gossip about as many bytes.
func payloadOf(reg httpapi.BrokerRegistration) []byte {
	b, _ := json.Marshal(reg)
	return b
}

func hasRoute(topic string) func(*routes.Table) bool {
	return func(t *routes.Table) bool { _, ok := t.TopicRoute(topic); return ok }
}

func noRoute(topic string) func(*routes.Table) bool {
	return func(t *routes.Table) bool { _, ok := t.TopicRoute(topic); return !ok }
}

func names(as []*bench.Agent) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

func without[T comparable](xs []T, x T) []T {
	var out []T
	for _, v := range xs {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// serfConfig gives serf the memberlist configuration of the namecast
// profile it is compared with. For lan that is memberlist's
// DefaultLANConfig (namecast only sets DeadNodeReclaimTime, which plays no
// part here).
func serfConfig(profile string) func() *memberlist.Config {
	return func() *memberlist.Config {
		gc, err := gossip.Profile(profile)
		if err != nil {
			panic(err) // profiles are checked before any cluster starts
		}
		return gc.Memberlist
	}
}

// pause spaces trials by a random 0.3-0.8 s: enough for the previous
// trial's retransmissions to die down, and random so trials do not start
// in step with the gossip ticker.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(300*time.Millisecond + rand.N(500*time.Millisecond)):
	}
}

func checkProfiles(ps []string) error {
	for _, p := range ps {
		if _, err := gossip.Profile(p); err != nil {
			return err
		}
	}
	return nil
}

func caseName(n int, profile string) string { return fmt.Sprintf("N=%d %s", n, profile) }
