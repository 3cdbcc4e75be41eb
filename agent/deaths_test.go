package agent_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/internal/testutil"
)

// TestNoFalseDeaths runs agents with the lan profile over a network that
// drops 10% of packets, with registrations flowing, and requires that no
// agent ever declares another dead or gone. CI runs 10 agents for 30 s;
// -chaos.duration=5m runs the soak, 20 agents for that long.
//
// What it can claim, and what it cannot. At 10% loss a probe goes
// unanswered only if the direct ping or its ack, all three indirect probes
// (four packets each) and the TCP fallback fail: 0.19 × 0.34³ ≈ 0.8% of
// probes reach the TCP fallback, and a stream is not lossy. A suspected
// member then has at least 4 s (SuspicionMult 4 × ProbeInterval 1 s ×
// log10(10); 24 s until two others confirm) to get its refutation through.
// So with the process scheduled promptly a member is hardly ever even
// suspected: 1 suspicion in 7 runs, alone (the process needs ~1 core of 2
// under -race) and beside a looping internal/chaos -race (CI's worst
// neighbour), where a 10 ms sleeper woke at most ~0.1 s late. But every
// deadline is real time, and SWIM assumes bounded processing delay: a
// process kept off the CPU for longer than the 500 ms probe timeout misses
// acks and TCP fallbacks, and one held off for seconds cannot refute in
// time, whatever the code does (Lifeguard's awareness slows a member whose
// own probes fail, not peers that all stall together). At a load of ~20 on
// 2 cores the process got 0.2 cores, its threads waited 9-12 s for a CPU
// per second they ran, it stalled up to 1.2 s, ~30 suspicions were raised
// per run and most runs had false deaths.
//
// So each run measures that wait. A run with departures in which the
// process's threads waited more than starvedWaitPerCPU seconds for a CPU
// per second they ran (a run queue ~4 threads deep per core: the machine,
// not the code, took the time) is inconclusive and is run again, up to
// maxAttempts times; departures in a run the machine did not starve fail
// at once; if every attempt was starved the test skips, saying so (the
// virtual-time twin in internal/chaos checks the same claim whatever the
// load). The code under test cannot
// buy itself a retry by being slow: CPU it burns is time running, which
// lowers the ratio, and each run reports the cores it used and its stalls.
func TestNoFalseDeaths(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s soak test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	seed := chaos.Seed(t, *chaosSeed, "chaos.seed")
	n, length := 10, 30*time.Second
	if *chaosDuration > 0 {
		n, length = 20, *chaosDuration
	}
	for attempt := 1; ; attempt++ {
		r := noFalseDeathsRun(t, seed, n, length)
		t.Logf("attempt %d: %d agents, %v at 10%% loss: %d of %d packets dropped, %d suspicions raised, %d departures; scheduling: %s",
			attempt, n, length, r.net.PacketsDropped, r.net.PacketsSent, r.suspicions, len(r.deaths), r.sched)
		if len(r.deaths) == 0 && r.err == nil {
			return
		}
		starved := r.sched.WaitPerCPU() > starvedWaitPerCPU
		if starved && attempt < maxAttempts {
			t.Logf("attempt %d inconclusive: %d departures (%v), convergence: %v, while the machine kept the process waiting %.1f s for a CPU per second it ran; running again",
				attempt, len(r.deaths), r.deaths, r.err, r.sched.WaitPerCPU())
			continue
		}
		t.Logf("failure detector trail:\n%s", strings.Join(r.trail, "\n"))
		if starved {
			// Nothing was measured but the machine. The protocol's claim
			// is still checked, in virtual time, by internal/chaos's
			// TestNoFalseDeaths, which no load can starve.
			t.Skipf("every one of %d attempts ran starved of CPU (%s; %d departures, convergence: %v): the machine is too loaded to test failure detection in real time",
				attempt, r.sched, len(r.deaths), r.err)
		}
		for _, e := range r.deaths {
			t.Errorf("false death: %s", e)
		}
		if r.err != nil {
			t.Error(r.err)
		}
		return
	}
}

const (
	// starvedWaitPerCPU is the run-queue wait per CPU-second past which a
	// run's departures are blamed on the machine: ~1 was measured beside
	// CI's worst neighbour (1 suspicion in 6 runs), 9-12 in the starved
	// runs (~30 suspicions each).
	starvedWaitPerCPU = 3.0
	maxAttempts       = 3
)

type deathsRun struct {
	deaths     []string
	trail      []string
	suspicions int
	err        error // the cluster did not converge afterwards
	sched      testutil.SchedReport
	net        gossiptest.Stats
}

// noFalseDeathsRun is one attempt: a fresh cluster, length of registrations
// at 10% loss, then the convergence check, departures counted throughout.
func noFalseDeathsRun(t *testing.T, seed int64, n int, length time.Duration) deathsRun {
	deaths := chaos.NewDeathLog()
	net := gossiptest.NewNetwork(seed)
	t.Cleanup(net.Close)
	c := agenttest.Start(t, n, agenttest.WithProfile("lan"), agenttest.WithNetwork(net),
		func(cfg *agent.Config) { cfg.Logger = slog.New(deaths) })
	// Stopped before the next attempt starts, not only at the test's end.
	defer net.Close()
	defer c.Close()
	sys := agenttest.NewChaosSystem(c, net)
	m := chaos.NewModel()
	for _, name := range sys.Names() {
		m.Started(name)
	}
	sched := testutil.StartSchedMeter()
	err := chaos.Run(sys, m, chaos.Config{Seed: seed, Duration: length, Step: 50 * time.Millisecond,
		Loss: 0.1, NoFaults: true, TTLs: true, Logf: t.Logf})
	if err != nil {
		sched.Stop()
		t.Fatal(err)
	}
	// Not Eventually: a run that lost members may not converge in time,
	// and whether it counts is decided from its scheduling below.
	err = converge(30*time.Second, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
	return deathsRun{deaths: deaths.Events(), trail: deaths.Trail(), suspicions: deaths.Suspicions(),
		err: err, sched: sched.Stop(), net: net.TotalStats()}
}

// converge polls cond until it returns nil or timeout passes.
func converge(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(15 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("not converged within %v: %w", timeout, err)
			}
			return nil
		}
		<-tick.C
	}
}
