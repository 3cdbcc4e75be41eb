package chaos_test

import (
	"flag"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/internal/testutil"
)

var (
	seedFlag  = flag.Int64("chaos.seed", 0, "run only this seed (0: -chaos.seeds random ones, logged)")
	seedsFlag = flag.Int("chaos.seeds", 2, "how many random seeds TestGossipChaos runs")
	// durationFlag is protocol time inside the bubble, which costs CPU but
	// no sleeping: about 1/20 of it without -race, 1/4 with.
	durationFlag = flag.Duration("chaos.duration", 0, "protocol time per seed of TestGossipChaos (0: 60s) and of TestNoFalseDeaths (0: 1m; the soak is 5m)")
)

// TestGossipChaos runs the chaos driver against bare gossip instances with
// memberlist's stock LAN timings inside a synctest bubble: a minute of
// protocol time per seed (failure detection, suspicion, push/pull and
// reconnects at their real pace) for about 3 s of CPU, 15 s under -race,
// so CI tries two seeds every run and `-chaos.seeds=50` (without -race)
// tries fifty in a few minutes. Within a seed the driver's choices repeat exactly;
// the interleaving of the nodes' goroutines, and so which packets the
// network drops, may not.
func TestGossipChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	seeds := []int64{*seedFlag}
	if *seedFlag == 0 {
		seeds = make([]int64, *seedsFlag)
	}
	length := 60 * time.Second
	if *durationFlag > 0 {
		length = *durationFlag
	}
	for _, s := range seeds {
		t.Run("", func(t *testing.T) {
			seed := chaos.Seed(t, s, "chaos.seed")
			synctest.Test(t, func(t *testing.T) { gossipChaos(t, seed, length) })
		})
	}
}

func gossipChaos(t *testing.T, seed int64, length time.Duration) {
	net := gossiptest.NewNetwork(seed)
	sys := startGossipSystem(t, net, 10, "lan", nil)
	defer func() {
		sys.close()
		// memberlist leaves probe goroutines waiting on their timers after
		// Shutdown; the bubble's clock must run for them to end.
		time.Sleep(time.Minute)
	}()
	m := chaos.NewModel()
	for _, name := range sys.Names() {
		m.Started(name)
	}
	testutil.Eventually(t, time.Minute, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
	err := chaos.Run(sys, m, chaos.Config{Seed: seed, Duration: length, Loss: 0.2, Duplicate: 0.05,
		MaxDelay: 10 * time.Millisecond, Logf: t.Logf, FaultEvery: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lifted := time.Now()
	testutil.Eventually(t, 2*time.Minute, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
	t.Logf("converged %v of protocol time after the faults were lifted: %s", time.Since(lifted), m.Counts(time.Now()))
	for _, a := range m.Anomalies() {
		t.Errorf("anomaly during the run: %s", a)
	}
}
