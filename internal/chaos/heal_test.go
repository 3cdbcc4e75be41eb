package chaos_test

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// TestHealKeepsLiveRoutes cuts one node off alone until it has declared
// every other member dead (and they it), then heals the cut. The lone node
// then passes on its stale verdicts about members the others never lost;
// memberlist takes them, and before the fix every agent dropped those live
// members' routes until they refuted. No live member's routes may
// disappear anywhere during the heal: it is watched every millisecond of
// protocol time, inside a synctest bubble, with the stock LAN timings.
func TestHealKeepsLiveRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("a partition test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	for seed := range int64(2) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { healKeepsLiveRoutes(t, seed+1) })
		})
	}
}

func healKeepsLiveRoutes(t *testing.T, seed int64) {
	const n = 5
	net := gossiptest.NewNetwork(seed)
	sys := startGossipSystem(t, net, n, "lan", nil)
	defer func() {
		sys.close()
		time.Sleep(time.Minute) // lets memberlist's probe timers end
	}()
	names := sys.Names()
	for i := range n {
		rec := routes.Record{Queue: &routes.Queue{Topic: "T" + names[i], BrokerName: names[i], ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
		d, _ := sys.nodes[i].table.ApplyLocal([]routes.Record{rec}, nil)
		sys.nodes[i].g.Publish(d)
	}
	holds := func(i int, origins []string) error {
		have := sys.nodes[i].table.Origins()
		for _, o := range origins {
			if o != names[i] && !slices.Contains(have, o) {
				return fmt.Errorf("%s does not hold the routes of %s", names[i], o)
			}
		}
		return nil
	}
	rest, lone := names[:n-1], names[n-1]
	testutil.Eventually(t, time.Minute, func() error {
		for i := range n {
			if err := holds(i, names); err != nil {
				return err
			}
		}
		return nil
	})

	net.Isolate(lone)
	testutil.Eventually(t, 2*time.Minute, func() error {
		if have := sys.nodes[n-1].table.Origins(); len(have) != 2 {
			return fmt.Errorf("the lone node still holds %v", have)
		}
		for i := range n - 1 {
			if slices.Contains(sys.nodes[i].table.Origins(), lone) {
				return fmt.Errorf("%s still holds the lone node's routes", names[i])
			}
		}
		return nil
	})

	net.Heal()
	healed := time.Now()
	// From the heal on, the members that were never cut off keep each
	// other's routes, and the lone node keeps what it has learned again.
	learned := map[string]bool{}
	for time.Since(healed) < 20*time.Second {
		for i := range n - 1 {
			if err := holds(i, rest); err != nil {
				t.Fatalf("%v after the heal: %v", time.Since(healed), err)
			}
		}
		have := sys.nodes[n-1].table.Origins()
		for o := range learned {
			if !slices.Contains(have, o) {
				t.Fatalf("%v after the heal: the lone node dropped %s's routes again", time.Since(healed), o)
			}
		}
		for _, o := range have {
			learned[o] = true
		}
		time.Sleep(time.Millisecond)
	}
	for i := range n {
		if err := holds(i, names); err != nil {
			t.Fatalf("20 s after the heal: %v", err)
		}
	}
}
