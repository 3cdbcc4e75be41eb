package gossip

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// The two damping rules of an overloaded cluster (docs/performance.md,
// "What feeds the spiral"), in a bubble: the cluster as a whole re-joins a
// failed member about once per ReconnectInterval, not once per member per
// interval, and a death is confirmed over TCP only when the dead member has
// routes to keep.

// spiralCluster starts n members of profile fast on one network, each
// joining the first, and waits until every one sees n alive; prep, if set,
// sees each before it starts.
func spiralCluster(t *testing.T, net *gossiptest.Network, n int, prep func(*Gossip)) []*Gossip {
	var gs []*Gossip
	for i := range n {
		g := startMember(t, net, fmt.Sprintf("h%d", i), nil, prep)
		gs = append(gs, g)
		if i > 0 {
			if _, err := g.Join([]string{gs[0].LocalAddr()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A member that missed an alive message in the join storm learns of it
	// by push/pull: one a minute per member at 33-64 members.
	testutil.Eventually(t, 3*time.Minute, func() error { return seeStatus(gs, "", StatusAlive, n) })
	return gs
}

// startMember starts one member of profile fast named name on net, cfgf
// (if set) changing its config and prep (if set) seeing it before it starts.
func startMember(t *testing.T, net *gossiptest.Network, name string, cfgf func(*Config), prep func(*Gossip)) *Gossip {
	cfg, _ := Profile("fast")
	cfg.Table = routes.NewTable(name, 1)
	cfg.Memberlist.Transport = net.NewTransport(name)
	return startWith(t, cfg, cfgf, prep)
}

// stopAll shuts the members down, then the network, and lets what they
// started end, so the bubble finds nothing blocked.
func stopAll(net *gossiptest.Network, gs []*Gossip) {
	for _, g := range gs {
		_ = g.Shutdown()
	}
	net.Close()
	time.Sleep(time.Minute)
}

// seeStatus checks that every member of gs counts want members in status st
// (name "": any), or that every one holds name in status st.
func seeStatus(gs []*Gossip, name string, st Status, want int) error {
	for _, g := range gs {
		c := 0
		for _, m := range g.Members() {
			if m.Status == st && (name == "" || m.Name == name) {
				c++
			}
		}
		if c != want {
			return fmt.Errorf("%s: %d members %s%s, want %d", g.name, c, st, name, want)
		}
	}
	return nil
}

// refusedDials sums the dials gs made that found nobody listening.
func refusedDials(net *gossiptest.Network, gs []*Gossip) uint64 {
	var n uint64
	for _, g := range gs {
		n += net.Stats(g.name).StreamsRefused
	}
	return n
}

// Ten members, one crashes. Each of the nine survivors used to re-join it on
// every tick (nine dials per interval); with Serf's rule each tries with
// probability failed/alive = 1/9, about one dial per interval in all. Over
// 100 intervals that is a binomial of mean 100 (σ ≈ 9.5), so the bounds
// below are many σ away from it, and from the old 900.
func TestReconnectTriesAFailedMemberAboutOncePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(1)
		gs := spiralCluster(t, net, 10, nil)
		defer stopAll(net, gs)
		dead, survivors := gs[9], gs[:9]
		_ = dead.Shutdown()
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(survivors, dead.name, StatusDead, 1) })
		// Probes of the suspect (with their TCP fallback) are over now.
		time.Sleep(10 * time.Second)
		before := refusedDials(net, survivors)
		interval := survivors[0].cfg.ReconnectInterval
		time.Sleep(100 * interval)
		tries := refusedDials(net, survivors) - before
		t.Logf("9 survivors tried the dead member %d times in 100 reconnect intervals", tries)
		if tries < 40 || tries > 250 {
			t.Fatalf("%d re-join attempts in 100 intervals, want about 100 (one per interval for the cluster)", tries)
		}
	})
}

// Two halves of a healed partition must still find each other at once: on
// the side of one, failed/alive is 1 and it tries every tick.
func TestReconnectMergesHealedPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(2)
		gs := spiralCluster(t, net, 4, nil)
		defer stopAll(net, gs)
		net.Isolate("h3")
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs[:3], "h3", StatusDead, 1) })
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs[3:], "", StatusDead, 3) })
		net.Heal()
		start := time.Now()
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs, "", StatusAlive, 4) })
		// Well within two reconnect intervals (3 s each in profile fast).
		if took := time.Since(start); took > 2*gs[0].cfg.ReconnectInterval {
			t.Fatalf("the healed partition merged after %v, want within two reconnect intervals", took)
		}
	})
}

// A member that dies holding no routes is not asked whether it is alive:
// there is nothing to keep while it refutes. One that holds routes still
// is, by every survivor, and its routes go once the check is refused.
func TestDeathConfirmedOnlyForMembersWithRoutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(3)
		var mu sync.Mutex
		asked := make(map[string]int) // confirmations sent, by "from>to"
		gs := spiralCluster(t, net, 5, func(g *Gossip) {
			g.cfg.ReconnectInterval = time.Hour // no re-join dials in the way
			name := g.name
			g.sentConfirm = func(to string) {
				mu.Lock()
				asked[name+">"+to]++
				mu.Unlock()
			}
		})
		defer stopAll(net, gs)
		withRoutes := gs[4]
		rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
		d, _ := withRoutes.table.ApplyLocal([]routes.Record{rec}, nil)
		withRoutes.Publish(d)
		testutil.Eventually(t, time.Minute, func() error {
			for _, g := range gs[:3] {
				if len(g.table.Topics()) != 1 {
					return fmt.Errorf("%s serves %v", g.name, g.table.Topics())
				}
			}
			return nil
		})

		_ = gs[3].Shutdown() // holds nothing
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs[:3], "h3", StatusDead, 1) })
		time.Sleep(5 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		for k, n := range asked {
			t.Errorf("%s: %d confirmations of a member that held no routes", k, n)
		}

		mu.Unlock()
		_ = withRoutes.Shutdown()
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs[:3], "h4", StatusDead, 1) })
		testutil.Eventually(t, time.Minute, func() error {
			for _, g := range gs[:3] {
				if len(g.table.Topics()) != 0 {
					return fmt.Errorf("%s still serves %v", g.name, g.table.Topics())
				}
			}
			return nil
		})
		mu.Lock()
		for _, g := range gs[:3] {
			if asked[g.name+">h4"] != 1 {
				t.Errorf("%s confirmed the death of the member with routes %d times, want 1", g.name, asked[g.name+">h4"])
			}
		}
	})
}
