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

// A crashed member's routes go on each survivor at the virtual instant its
// memberlist declares the member dead: the confirmation (withdraw.go) is
// refused at once by a crashed process, so namecast adds no time to
// memberlist's verdict. P6's crash row compares namecast with Serf, whose
// member-failed event is raised in the same callback; a delay of ours
// would show there as namecast's "first suspicion → gone everywhere"
// growing past Serf's (docs/performance.md, P6), and here first.
func TestCrashedMembersRoutesGoWhenItIsDeclaredDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(4)
		net.SetDelay(100*time.Microsecond, time.Millisecond)
		var mu sync.Mutex
		asked := map[string]int{}
		gs := spiralCluster(t, net, 8, func(g *Gossip) {
			name := g.name
			g.sentConfirm = func(string) {
				mu.Lock()
				asked[name]++
				mu.Unlock()
			}
		})
		defer stopAll(net, gs)
		victim, survivors := gs[7], gs[:7]
		rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
		d, _ := victim.table.ApplyLocal([]routes.Record{rec}, nil)
		victim.Publish(d)
		testutil.Eventually(t, time.Minute, func() error {
			for _, g := range survivors {
				if _, ok := g.table.Entry(victim.name); !ok {
					return fmt.Errorf("%s lacks the victim's records", g.name)
				}
			}
			return nil
		})

		// Each survivor's view, polled every virtual millisecond: when it
		// has the victim dead, and when it no longer holds its records.
		dead := make([]time.Time, len(survivors))
		gone := make([]time.Time, len(survivors))
		var wg sync.WaitGroup
		for i, g := range survivors {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(time.Millisecond) {
					if dead[i].IsZero() && statusOf(g, victim.name) == StatusDead {
						dead[i] = time.Now()
					}
					if _, ok := g.table.Entry(victim.name); !ok && gone[i].IsZero() {
						gone[i] = time.Now()
					}
					if !dead[i].IsZero() && !gone[i].IsZero() {
						return
					}
				}
			}()
		}
		crash := time.Now()
		_ = victim.Shutdown()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for i, g := range survivors {
			if dead[i].IsZero() || gone[i].IsZero() {
				t.Fatalf("%s: within a minute of the crash, dead at %v, records gone at %v", g.name, dead[i], gone[i])
			}
			if lag := gone[i].Sub(dead[i]); lag > 2*time.Millisecond || lag < 0 {
				t.Errorf("%s: the crashed member's records went %v after it was declared dead (%v after the crash), want at once", g.name, lag, gone[i].Sub(crash))
			}
			if asked[g.name] != 1 {
				t.Errorf("%s confirmed the death %d times, want 1", g.name, asked[g.name])
			}
		}
	})
}

func statusOf(g *Gossip, name string) Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := g.members[name]; m != nil {
		return m.status
	}
	return ""
}
