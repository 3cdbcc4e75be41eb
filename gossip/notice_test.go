package gossip

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// startLoopback starts n members on loopback, all joined, with tune
// applied to each one's config first.
func startLoopback(t *testing.T, n int, tune func(*Config)) []*Gossip {
	t.Helper()
	var gs []*Gossip
	for i := range n {
		gs = append(gs, startLoopbackMember(t, fmt.Sprintf("m%d", i), tune, nil))
	}
	for _, g := range gs[1:] {
		testutil.Eventually(t, 10*time.Second, func() error {
			_, err := g.Join([]string{gs[0].LocalAddr()})
			return err
		})
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, g := range gs {
			if a := g.AliveMembers(); a != n {
				return fmt.Errorf("%s sees %d alive members", g.name, a)
			}
		}
		return nil
	})
	return gs
}

// Rule changes too large to gossip as ops (over MaxGossipOps at once, or
// one op over half a packet) are announced. Peers used to pull them from
// the rules' pseudo-origin, which no member answers, so only anti-entropy
// delivered them; with anti-entropy and push/pull off they must still
// reach every member, from the agent that wrote them.
func TestLargeAndBulkRulesSpreadWithoutAntiEntropy(t *testing.T) {
	gs := startLoopback(t, 3, func(c *Config) {
		c.AntiEntropyInterval = time.Hour
		c.Memberlist.PushPullInterval = 0
	})
	var bulk []routes.Record
	for i := range 100 {
		bulk = append(bulk, routes.Record{KV: &routes.KV{Namespace: "ns", Key: fmt.Sprintf("k%03d", i), Value: "v"}})
	}
	big := routes.Record{KV: &routes.KV{Namespace: "ns", Key: "big", Value: strings.Repeat("x", 2000)}}
	for _, recs := range [][]routes.Record{bulk, {big}} {
		d, ok := gs[0].table.ApplyRules(recs, nil)
		if !ok {
			t.Fatal("ApplyRules refused the rules")
		}
		gs[0].Publish(d)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, g := range gs[1:] {
			if kv := g.table.KVs("ns"); len(kv) != 101 {
				return fmt.Errorf("%s holds %d of the 101 rules", g.name, len(kv))
			}
		}
		return nil
	})
}
