package vtime_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/internal/testutil"
)

// TestNoFalseDeaths runs agents with the lan profile over a network that
// drops 10% of packets, with registrations flowing, and requires that no
// agent ever declares another dead or gone. CI runs 10 agents for 30 s of
// protocol time in a synctest bubble (every door in memory), where no
// load can starve a process: a departure there is the code's. At 10% loss
// a probe goes unanswered only if the direct ping or its ack, all three
// indirect probes (four packets each) and the TCP fallback fail: 0.19 ×
// 0.34³ ≈ 0.8% of probes reach the TCP fallback, and a stream is not
// lossy. A suspected member then has at least 4 s (SuspicionMult 4 ×
// ProbeInterval 1 s × log10(10); 24 s until two others confirm) to get
// its refutation through.
//
// -chaos.duration=5m runs the soak instead: 20 agents for that long in
// real time, which also checks that the agent's own processing never
// holds an ack past the 500 ms probe timeout. But every deadline is then
// real time, and SWIM assumes bounded processing delay: a process kept
// off the CPU for longer than the probe timeout misses acks and TCP
// fallbacks, and one held off for seconds cannot refute in time, whatever
// the code does. At a load of ~20 on 2 cores the process got 0.2 cores,
// its threads waited 9-12 s for a CPU per second they ran, it stalled up
// to 1.2 s, ~30 suspicions were raised per run and most runs had false
// deaths. So each soak run measures that wait. A run with departures in
// which the process's threads waited more than starvedWaitPerCPU seconds
// for a CPU per second they ran (a run queue ~4 threads deep per core:
// the machine, not the code, took the time) is inconclusive and is run
// again, up to maxAttempts times; departures in a run the machine did not
// starve fail at once; if every attempt was starved the soak skips, saying
// so. The code under test cannot buy itself a retry by being slow: CPU it
// burns is time running, which lowers the ratio, and each run reports the
// cores it used and its stalls.
func TestNoFalseDeaths(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	seed := chaos.Seed(t, *chaosSeed, "chaos.seed")
	if *chaosDuration > 0 {
		noFalseDeathsSoak(t, seed, 20, *chaosDuration)
		return
	}
	synctest.Test(t, func(t *testing.T) {
		const n, length = 10, 30 * time.Second
		r := noFalseDeathsRun(t, seed, n, length, false)
		t.Logf("%d agents, %v of protocol time at 10%% loss: %d of %d packets dropped, %d suspicions raised, %d departures",
			n, length, r.net.PacketsDropped, r.net.PacketsSent, r.suspicions, len(r.deaths))
		r.report(t)
	})
}

// noFalseDeathsSoak runs n agents for length in real time, again while
// the machine starves the process (see TestNoFalseDeaths).
func noFalseDeathsSoak(t *testing.T, seed int64, n int, length time.Duration) {
	for attempt := 1; ; attempt++ {
		r := noFalseDeathsRun(t, seed, n, length, true)
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
		if starved {
			// Nothing was measured but the machine. The protocol's claim
			// is still checked, in virtual time, by the CI run.
			t.Logf("failure detector trail:\n%s", strings.Join(r.trail, "\n"))
			t.Skipf("every one of %d attempts ran starved of CPU (%s; %d departures, convergence: %v): the machine is too loaded to test failure detection in real time",
				attempt, r.sched, len(r.deaths), r.err)
		}
		r.report(t)
		return
	}
}

// report fails t for every departure and for a failed convergence.
func (r deathsRun) report(t *testing.T) {
	if len(r.deaths) == 0 && r.err == nil {
		return
	}
	t.Logf("failure detector trail:\n%s", strings.Join(r.trail, "\n"))
	for _, e := range r.deaths {
		t.Errorf("false death: %s", e)
	}
	if r.err != nil {
		t.Error(r.err)
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

// noFalseDeathsRun is one attempt: a fresh cluster in memory, length of
// registrations at 10% loss, then the convergence check, departures
// counted throughout; meter measures the process's scheduling (real time
// only).
func noFalseDeathsRun(t *testing.T, seed int64, n int, length time.Duration, meter bool) deathsRun {
	deaths := chaos.NewDeathLog()
	mem := agenttest.NewMemory(t, seed)
	c := agenttest.Start(t, n, agenttest.WithProfile("lan"), mem.Option(),
		func(cfg *agent.Config) { cfg.Logger = slog.New(deaths) })
	// Stopped before the next attempt starts, not only at the test's end.
	defer mem.Net.Close()
	defer c.Close()
	sys := agenttest.NewChaosSystemInMemory(c, mem)
	m := chaos.NewModel()
	for _, name := range sys.Names() {
		m.Started(name)
	}
	var sched *testutil.SchedMeter
	if meter {
		sched = testutil.StartSchedMeter()
	}
	r := deathsRun{}
	err := chaos.Run(sys, m, chaos.Config{Seed: seed, Duration: length, Step: 50 * time.Millisecond,
		Loss: 0.1, NoFaults: true, TTLs: true, Logf: t.Logf})
	if sched != nil {
		r.sched = sched.Stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	// Not Eventually: a run that lost members may not converge in time,
	// and whether it counts is decided from its scheduling.
	r.err = converge(30*time.Second, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
	r.deaths, r.trail, r.suspicions, r.net = deaths.Events(), deaths.Trail(), deaths.Suspicions(), mem.Net.TotalStats()
	return r
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
