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

// A member cut off long enough to be declared dead comes back at the same
// incarnation (a false death, as on an overloaded cluster). If it held no
// routes when it went down, nobody asks it what it holds on its return
// (members.go), yet a route it registered while the others held it dead,
// whose ops they refused, reaches every one of them within a few
// anti-entropy intervals. If it held routes, they were dropped at its
// death; it is asked, and they are back as fast. In a bubble, profile fast
// (anti-entropy every 500 ms).
func TestMemberBackFromFalseDeathConverges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(5)
		var mu sync.Mutex
		asked := map[string]int{} // asks, by member asked
		gs := spiralCluster(t, net, 5, func(g *Gossip) {
			g.askedJoin = func(m string) {
				mu.Lock()
				asked[m]++
				mu.Unlock()
			}
		})
		defer stopAll(net, gs)
		interval := gs[0].cfg.AntiEntropyInterval
		register := func(g *Gossip, topic string) {
			rec := routes.Record{Queue: &routes.Queue{Topic: topic, BrokerName: "b-" + g.name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
			d, _ := g.table.ApplyLocal([]routes.Record{rec}, nil)
			g.Publish(d)
		}
		serve := func(gs []*Gossip, topics int) error {
			for _, g := range gs {
				if n := len(g.table.Topics()); n != topics {
					return fmt.Errorf("%s serves %v, want %d topics", g.name, g.table.Topics(), topics)
				}
			}
			return nil
		}
		asksOf := func(name string) int {
			mu.Lock()
			defer mu.Unlock()
			return asked[name]
		}
		// falseDeath cuts member i off until every other holds it dead,
		// lets it register topic meanwhile (the others serve cut topics
		// then), heals, and returns how long after every member saw it
		// alive again they all served topics, and how many times it was
		// asked what it holds meanwhile.
		falseDeath := func(i int, topic string, cut, topics int) (time.Duration, int) {
			asks := asksOf(gs[i].name)
			name := gs[i].name
			net.Isolate(name)
			testutil.Eventually(t, time.Minute, func() error {
				return seeStatus(append(append([]*Gossip{}, gs[:i]...), gs[i+1:]...), name, StatusDead, 1)
			})
			register(gs[i], topic)
			time.Sleep(5 * interval) // its ops are refused meanwhile
			if err := serve(gs[:i], cut); err != nil {
				t.Fatalf("while %s was cut off: %v", name, err)
			}
			net.Heal()
			testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs, "", StatusAlive, len(gs)) })
			back := time.Now()
			testutil.Eventually(t, time.Minute, func() error { return serve(gs, topics) })
			return time.Since(back), asksOf(gs[i].name) - asks
		}

		// h4 holds nothing when it is declared dead.
		took, asks := falseDeath(4, "T4", 0, 1)
		t.Logf("a member without routes, back from a false death: its new route everywhere %v after it was alive everywhere; asked %d times", took, asks)
		if asks != 0 {
			t.Errorf("the member without routes was asked %d times on its return, want 0", asks)
		}
		if took > 6*interval {
			t.Errorf("its route took %v to reach every member, want within 6 anti-entropy intervals (%v)", took, 6*interval)
		}

		// h3 holds a route when it is declared dead: dropped, then asked
		// for on its return, with the one it adds while cut off.
		register(gs[3], "T3")
		testutil.Eventually(t, time.Minute, func() error { return serve(gs, 2) })
		took, asks = falseDeath(3, "T3b", 1, 3)
		t.Logf("a member with routes, back from a false death: its routes everywhere %v after it was alive everywhere; asked %d times", took, asks)
		if asks != 4 {
			t.Errorf("the member whose routes were dropped was asked %d times on its return, want once by each of the 4 others", asks)
		}
		if took > 6*interval {
			t.Errorf("its routes took %v to reach every member, want within 6 anti-entropy intervals (%v)", took, 6*interval)
		}
	})
}
