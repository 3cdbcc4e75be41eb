package gossip

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/routes"
)

// A change reaches every member within one network delay of its
// publication, registration and withdrawal alike: its origin sends it to
// each member directly, where the epidemic push of old missed ~6% of them,
// who then waited for a gossip tick. In a bubble, links of 0.1-1 ms, 20 members, 10 changes.
func TestChangeReachesEveryMemberInOneHop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(7)
		net.SetDelay(100*time.Microsecond, time.Millisecond)
		gs := spiralCluster(t, net, 20, nil)
		defer stopAll(net, gs)
		var worst time.Duration
		for trial := range 10 {
			origin := gs[trial%len(gs)]
			rec := routes.Record{Queue: &routes.Queue{Topic: fmt.Sprintf("T%d", trial), BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
			for _, withdraw := range []bool{false, true} {
				var d routes.Delta
				if withdraw {
					d, _ = origin.table.ApplyLocal(nil, []string{rec.Key()})
				} else {
					d, _ = origin.table.ApplyLocal([]routes.Record{rec}, nil)
				}
				start := time.Now()
				origin.Publish(d)
				want := d.Ops[0].Seq
				for {
					behind := 0
					for _, g := range gs {
						if e, _ := g.table.Entry(origin.name); e.Seq < want {
							behind++
						}
					}
					if behind == 0 {
						break
					}
					if time.Since(start) > time.Minute {
						t.Fatalf("trial %d: %d members lack the change after a minute", trial, behind)
					}
					time.Sleep(100 * time.Microsecond)
				}
				worst = max(worst, time.Since(start))
				time.Sleep(time.Second) // the queues drain between changes
			}
		}
		if worst > 1100*time.Microsecond {
			t.Errorf("the slowest change reached the last member after %v, want within one link's delay (1 ms)", worst)
		}
		t.Logf("slowest change to reach every member: %v", worst)
	})
}
