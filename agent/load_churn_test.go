package agent_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// maxTombstones is routes' bound on the deletes remembered per origin
// (routes.maxTombstones): past it the oldest half is forgotten.
const maxTombstones = 4096

// TestChurnStaysBounded registers and withdraws URLs on three agents in
// rounds, each round new names (a third expiring by TTL rather than being
// withdrawn), and checks after every round that what the agents keep stays
// bounded: tombstones, broadcast queues, TTL deadlines, goroutines, and the
// heap, which must level off instead of growing with the work done.
func TestChurnStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	const rounds, perAgent = 6, 1500
	c := agenttest.Start(t, 3)
	goroutines := runtime.NumGoroutine()
	prof, _ := gossip.Profile("local")
	queueBound := prof.MaxQueuedBroadcasts
	var heaps []uint64
	for r := range rounds {
		maxQueued := churnRound(t, c, r, perAgent)
		st := measure(t, c, goroutines)
		heaps = append(heaps, st.heap)
		t.Logf("round %d: %d registered and withdrawn per agent; heap %.1f MB, goroutines %d (%+d), most tombstones of one origin %d, broadcasts queued during the round at most %d, after %v, TTL deadlines %v",
			r, perAgent, float64(st.heap)/(1<<20), st.goroutines, st.goroutines-goroutines, st.tombstones, maxQueued, st.queued, st.ttls)
		if maxQueued > queueBound {
			t.Errorf("round %d: a broadcast queue reached %d, over gossip's bound of %d", r, maxQueued, queueBound)
		}
		if st.tombstones > maxTombstones {
			t.Errorf("round %d: an origin keeps %d tombstones, over routes' bound of %d", r, st.tombstones, maxTombstones)
		}
	}
	// Tombstones fill up to their bound over the first rounds (and Go maps
	// keep their size); from then on the heap must stay level, whatever
	// the number of rounds. One reading can still catch a push/pull or a
	// snapshot in flight (CI once read 16 MB in a cluster that levels off
	// at 10-13 MB over 12 rounds), so the test asks that the heap come back
	// under the bound once quiet: memory that was leaked never does.
	settled := max(heaps[2], heaps[3])
	limit := settled + settled/4 + 2<<20
	testutil.Eventually(t, 30*time.Second, func() error {
		if h := liveHeap(); h > limit {
			return fmt.Errorf("heap %.1f MB after %d rounds, over %.1f MB (rounds 2-3 settled at %.1f MB, + 25%% + 2 MB)",
				float64(h)/(1<<20), rounds, float64(limit)/(1<<20), float64(settled)/(1<<20))
		}
		return nil
	})
}

// churnRound registers perAgent new URLs on every agent at once (a third
// with a 1 s TTL), withdraws the others, waits for the TTLs to run out and
// the cluster to converge, and returns the longest broadcast queue seen.
func churnRound(t *testing.T, c *agenttest.Cluster, round, perAgent int) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, c.Len())
	stop := make(chan struct{})
	maxQueued := watchQueues(c, stop)
	for _, i := range c.Running() {
		wg.Add(1)
		go func(a *agent.Agent) {
			defer wg.Done()
			errs <- churnAgent(a, round, perAgent)
		}(c.Agent(i))
	}
	wg.Wait()
	for range c.Running() {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, time.Minute, func() error {
		for _, i := range c.Running() {
			a := c.Agent(i)
			if n := len(a.Table().LocalRecords("")); n != 0 || agent.TTLCount(a) != 0 {
				return fmt.Errorf("%s still has %d registrations, %d TTLs pending", a.Name(), n, agent.TTLCount(a))
			}
		}
		return c.Converged()
	})
	close(stop)
	return <-maxQueued
}

// churnAgent goes through the Go API: the HTTP layer adds nothing the
// agent keeps, and would make the rounds several times slower.
func churnAgent(a *agent.Agent, round, n int) error {
	var keep []string
	for k := range n {
		u := fmt.Sprintf("dubbo://10.%d.%d.%d:20880/com.churn.Svc%d?version=%s", round, k>>8, k&255, k%50, a.Name())
		ttl := time.Duration(0)
		if k%3 == 0 {
			ttl = time.Second
		} else {
			keep = append(keep, u)
		}
		if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u, ttl); err != nil {
			return err
		}
	}
	for _, u := range keep {
		if ok, err := agent.Door[*httpapi.Server](a).UnregisterURL(u); !ok || err != nil {
			return fmt.Errorf("unregister %s: %v %v", u, ok, err)
		}
	}
	return nil
}

// watchQueues samples every agent's broadcast queue until stop closes, then
// sends the longest it saw.
func watchQueues(c *agenttest.Cluster, stop chan struct{}) chan int {
	out := make(chan int, 1)
	go func() {
		most := 0
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, i := range c.Running() {
				if a := c.Agent(i); a != nil {
					most = max(most, a.Gossip().QueuedBroadcasts())
				}
			}
			select {
			case <-stop:
				out <- most
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

type churnStats struct {
	heap       uint64
	goroutines int
	tombstones int   // the most any agent keeps for one origin
	queued     []int // per agent, after the round
	ttls       []int
}

// measure reads the cluster's sizes once it is quiet: goroutines back near
// baseline and no pull pending, so no snapshot in flight swells the heap.
func measure(t *testing.T, c *agenttest.Cluster, baseline int) churnStats {
	testutil.Eventually(t, 30*time.Second, func() error {
		for _, i := range c.Running() {
			if n := c.Agent(i).Gossip().PendingPulls(); n > 0 {
				return fmt.Errorf("agent-%d has %d pulls pending", i, n)
			}
		}
		if n := runtime.NumGoroutine(); n > baseline+2 {
			return fmt.Errorf("%d goroutines, %d over the baseline", n, n-baseline)
		}
		return nil
	})
	var st churnStats
	for _, i := range c.Running() {
		a := c.Agent(i)
		for _, o := range a.Table().Origins() {
			s, _ := a.Table().Snapshot(o)
			tombs := 0
			for _, op := range s.Ops {
				if op.Rec == nil {
					tombs++
				}
			}
			if o != routes.RulesOrigin {
				st.tombstones = max(st.tombstones, tombs)
			}
		}
		st.queued = append(st.queued, a.Gossip().QueuedBroadcasts())
		st.ttls = append(st.ttls, agent.TTLCount(a))
	}
	st.heap = liveHeap()
	st.goroutines = runtime.NumGoroutine()
	return st
}

// liveHeap is the heap in use just after a collection, the least of five
// readings: memberlist allocates all the time (a compressor per packet),
// and one reading can include megabytes made since the collection ended.
func liveHeap() uint64 {
	least := uint64(1<<63 - 1)
	for range 5 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		least = min(least, ms.HeapAlloc)
	}
	return least
}
