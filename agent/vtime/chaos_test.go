package vtime_test

import (
	"flag"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/internal/testutil"
)

var (
	chaosSeed = flag.Int64("chaos.seed", 0, "seed of the chaos and reliability runs (0: random, logged)")
	// chaosDuration turns the bounded CI runs into soaks: TestChaos runs
	// this long, and TestNoFalseDeaths runs 20 agents this long.
	chaosDuration = flag.Duration("chaos.duration", 0, "soak length for TestChaos and TestNoFalseDeaths (0: the short CI runs)")
)

// ciChaos is TestChaos's length in CI, in the bubble's protocol time.
const ciChaos = 40 * time.Second

// TestChaos runs 10 agents over an in-memory network that loses 20% of
// packets, duplicates 5% and delays (so reorders) them by up to 10 ms,
// through random registrations, renewals, TTL expiry, unregistrations,
// cluster rules, crashes, graceful leaves, restarts and partitions, then
// lifts the faults and checks that the cluster converged on exactly what
// the model says: nothing live lost, nothing dead or withdrawn back. It
// runs in a synctest bubble, every door on an in-memory listener: the
// timings are memberlist's and the agent's own, and cost CPU, not
// sleeping.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	seed := chaos.Seed(t, *chaosSeed, "chaos.seed")
	length := ciChaos
	if *chaosDuration > 0 {
		length = *chaosDuration
	}
	synctest.Test(t, func(t *testing.T) { agentChaos(t, seed, length) })
}

func agentChaos(t *testing.T, seed int64, length time.Duration) {
	mem := agenttest.NewMemory(t, seed) // closed after the cluster, whose cleanup is registered later
	c := agenttest.Start(t, 10, mem.Option())
	sys := agenttest.NewChaosSystemInMemory(c, mem)
	net := mem.Net
	m := chaos.NewModel()
	for _, name := range sys.Names() {
		m.Started(name)
	}
	err := chaos.Run(sys, m, chaos.Config{Seed: seed, Duration: length, Loss: 0.2, Duplicate: 0.05, MaxDelay: 10 * time.Millisecond,
		TTLs: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	lifted := time.Now()
	testutil.Eventually(t, time.Minute, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
	t.Logf("converged %v after the faults were lifted: %s; network %+v",
		time.Since(lifted).Round(time.Millisecond), m.Counts(time.Now()), net.TotalStats())
	for _, a := range m.Anomalies() {
		t.Errorf("anomaly during the run: %s", a)
	}
}
