package gossip

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// A member (a) that never hears a newcomer's (c's) alive message refuses
// c's routes until memberlist's periodic push/pull (every 30 s and more;
// turned off here: a random first one, even on a 10-minute interval, told
// a of c in 3 runs of 200). Every packet to a is lost, so a can hear of c
// only over a stream; the routes must come within seconds, from
// anti-entropy's digests that list c. In a bubble, profile fast
// (anti-entropy every 500 ms, so a repair 2.5 s after c is first listed).
func TestMemberThatMissedAnArrivalLearnsItFromDigests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(7)
		noPushPull := func(g *Gossip) { g.cfg.Memberlist.PushPullInterval = 0 }
		// Each joins all before it: a join's push/pull tells both sides of
		// each other, so formation needs no alive message (without
		// push/pull nothing would repair one missed: 1 run in ~700).
		var gs []*Gossip
		for i := range 5 {
			g := startMember(t, net, fmt.Sprintf("h%d", i), nil, noPushPull)
			var addrs []string
			for _, o := range gs {
				addrs = append(addrs, o.LocalAddr())
			}
			gs = append(gs, g)
			if len(addrs) > 0 {
				if n, err := g.Join(addrs); n != len(addrs) {
					t.Fatalf("%s joined %d of %d: %v", g.name, n, len(addrs), err)
				}
			}
		}
		a := gs[0]
		defer func() { stopAll(net, gs) }()
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs, "", StatusAlive, len(gs)) })
		c := startMember(t, net, "c", nil, noPushPull)
		gs = append(gs, c)
		for _, g := range gs[1:] {
			net.SetLinkLoss(g.name, a.name, 1)
		}
		if _, err := c.Join([]string{gs[1].LocalAddr()}); err != nil {
			t.Fatal(err)
		}
		rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
		d, _ := c.table.ApplyLocal([]routes.Record{rec}, nil)
		c.Publish(d)
		at := time.Now()
		testutil.Eventually(t, time.Minute, func() error {
			if _, ok := a.table.Entry("c"); !ok {
				return fmt.Errorf("a lacks c's records (c %q)", statusOf(a, "c"))
			}
			return nil
		})
		took := time.Since(at)
		for _, g := range gs[1:] {
			net.SetLinkLoss(g.name, a.name, 0)
		}
		t.Logf("a had c's records %v after c registered them", took)
		if took > 6*time.Second {
			t.Fatalf("a took %v to learn of c, want within 6 s", took)
		}
	})
}
