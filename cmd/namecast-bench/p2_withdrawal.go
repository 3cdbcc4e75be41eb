package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/internal/bench"
)

// withdrawal is what P2 measures per system at one size and profile.
type withdrawal struct {
	crash bench.Durations
	leave bench.Durations
	idle  []float64          // bytes/s sent by each member while nothing changes
	src   map[string]float64 // the mean of idle by class of traffic
}

// withdrawTimeout bounds a crash trial: memberlist's suspicion can take up
// to SuspicionMaxTimeoutMult (6) times its minimum without confirmations.
func withdrawTimeout(profile string) time.Duration {
	if profile == "lan" {
		return 60 * time.Second
	}
	return 30 * time.Second
}

// runP2 runs both systems' clusters side by side and alternates their
// trials (crash, then leave; namecast first on even rounds, serf first on
// odd ones), so a spell of load on this shared machine falls on both
// alike instead of on whichever ran then.
func runP2(ctx context.Context, o *options) ([]bench.Figure, error) {
	if err := checkProfiles(o.profiles); err != nil {
		return nil, err
	}
	var figs []bench.Figure
	for _, profile := range o.profiles {
		for _, n := range o.p2N {
			nc, sf, err := withdrawBoth(ctx, n, profile, o)
			if err != nil {
				return figs, fmt.Errorf("N=%d %s: %w", n, profile, err)
			}
			figs = append(figs, p2Figures(n, profile, nc, sf)...)
		}
	}
	return figs, nil
}

// p2Side is one system's cluster in P2.
type p2Side struct {
	name  string
	res   withdrawal
	trial func(ctx context.Context, crash bool) (bench.Outcome, error) // stop one member, wait, replace it
}

func withdrawBoth(ctx context.Context, n int, profile string, o *options) (withdrawal, withdrawal, error) {
	bench.Progress("  namecast %s: starting %d agents", profile, n)
	c, err := startWithdrawNamecast(ctx, n, profile)
	if err != nil {
		return withdrawal{}, withdrawal{}, fmt.Errorf("namecast: %w", err)
	}
	defer c.Close()
	bench.Progress("  serf %s: starting %d members", profile, n)
	s, err := bench.StartSerfCluster(ctx, n, serfConfig(profile))
	if err != nil {
		return withdrawal{}, withdrawal{}, fmt.Errorf("serf: %w", err)
	}
	defer s.Close()
	timeout := withdrawTimeout(profile)
	nc := &p2Side{name: "namecast", trial: func(ctx context.Context, crash bool) (bench.Outcome, error) {
		out, err := stopNamecast(ctx, c, crash, timeout)
		if err == nil {
			err = replaceNamecast(ctx, c, n)
		}
		return out, err
	}}
	sf := &p2Side{name: "serf", trial: func(ctx context.Context, crash bool) (bench.Outcome, error) {
		return stopSerf(ctx, s, n, crash, timeout)
	}}
	nc.res.idle, nc.res.src = idleTraffic(ctx, c.Transports(), o.p2IdleFor)
	sf.res.idle, sf.res.src = idleTraffic(ctx, s.Transports(), o.p2IdleFor)
	for i := range 2 * o.p2Trials {
		crash := i%2 == 0
		order := []*p2Side{nc, sf}
		if (i/2)%2 == 1 {
			order = []*p2Side{sf, nc}
		}
		for _, side := range order {
			if ctx.Err() != nil {
				return nc.res, sf.res, ctx.Err()
			}
			out, err := side.trial(ctx, crash)
			if err != nil {
				return nc.res, sf.res, fmt.Errorf("%s: %w", side.name, err)
			}
			if crash {
				side.res.crash.Add(out.Last, out.TimedOut)
			} else {
				side.res.leave.Add(out.Last, out.TimedOut)
			}
		}
	}
	for _, side := range []*p2Side{nc, sf} {
		bench.Progress("  %s %s N=%d: crash p50 %.2fs, leave p50 %.2fs", side.name, profile, n, side.res.crash.Stat().P50, side.res.leave.Stat().P50)
	}
	return nc.res, sf.res, nil
}

func p2Figures(n int, profile string, nc, sf withdrawal) []bench.Figure {
	cs := caseName(n, profile)
	goal := "p99 ≤ serf p99 + 0.5s"
	crash := bench.Figure{Scenario: "P2", Case: cs, Metric: "crash → gone everywhere", Unit: bench.UnitSeconds,
		Namecast: nc.crash.Stat()}.WithPeer(sf.crash.Stat())
	if profile == "fast" {
		// The goal for the faster profile: gone within 3 s at N=50.
		crash = crash.Judge(goal+" and ≤ 3s", crash.Namecast.P99 <= crash.Serf.P99+0.5 && crash.Namecast.P99 <= 3)
	} else {
		crash = crash.Judge(goal, crash.Namecast.P99 <= crash.Serf.P99+0.5)
	}
	leave := bench.Figure{Scenario: "P2", Case: cs, Metric: "leave → gone everywhere", Unit: bench.UnitSeconds,
		Namecast: nc.leave.Stat()}.WithPeer(sf.leave.Stat())
	leave = leave.Judge(goal, leave.Namecast.P99 <= leave.Serf.P99+0.5)
	idle := bench.Figure{Scenario: "P2", Case: cs, Metric: "idle traffic per member", Unit: bench.UnitBytesPS,
		Namecast: bench.Summarize(nc.idle)}.WithPeer(bench.Summarize(sf.idle))
	idle.Note = "p50/p99/max across members; the bandwidth price of the profile's failure detection"
	return append([]bench.Figure{crash, leave, idle}, sourceFigures("P2", cs, nc.src, sf.src)...)
}

// startWithdrawNamecast starts n agents, each registering a broker with
// a topic of its own; a trial stops one (crash or leave) and waits until
// that topic is gone on every other agent, then starts a fresh agent in
// its place.
func startWithdrawNamecast(ctx context.Context, n int, profile string) (*bench.Cluster, error) {
	c, err := bench.StartCluster(ctx, n, profile)
	if err != nil {
		return nil, err
	}
	for _, a := range c.Running() {
		if _, err := agent.Door[*httpapi.Server](a.Agent).RegisterBroker(brokerOf("b-"+a.Name, "t-"+a.Name), 0); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.WaitConverged(ctx, time.Minute); err != nil {
		c.Close()
		return nil, err
	}
	// The registrations are still being retransmitted for a moment.
	bench.Settle(ctx, c.Transports(), bench.SettledRate, 20*time.Second)
	return c, nil
}

func stopNamecast(ctx context.Context, c *bench.Cluster, crash bool, timeout time.Duration) (bench.Outcome, error) {
	victim := c.RandomMember()
	c.Detach(victim)
	others := c.Running()
	arr := bench.NewArrivals(names(others))
	wctx, cancel := context.WithCancel(ctx)
	stop := bench.WatchTables(wctx, others, arr, noRoute("t-"+victim.Name))
	done := make(chan error, 1)
	arr.Start()
	// Leave blocks while the news spreads; the clock runs from the call.
	go func() {
		if crash {
			done <- victim.Agent.Shutdown()
		} else {
			done <- victim.Agent.Leave(ctx)
		}
	}()
	out := arr.Wait(ctx, timeout)
	cancel()
	stop()
	err := <-done
	if !crash && err != nil {
		// A leave that timed out waiting for its broadcast still left.
		bench.Progress("  leave of %s: %v", victim.Name, err)
		err = nil
	}
	return out, err
}

func replaceNamecast(ctx context.Context, c *bench.Cluster, n int) error {
	a, err := c.Add()
	if err != nil {
		return err
	}
	if _, err := agent.Door[*httpapi.Server](a.Agent).RegisterBroker(brokerOf("b-"+a.Name, "t-"+a.Name), 0); err != nil {
		return err
	}
	if err := c.WaitMembers(ctx, n); err != nil {
		return err
	}
	if err := c.WaitConverged(ctx, time.Minute); err != nil {
		return err
	}
	bench.Settle(ctx, c.Transports(), bench.SettledRate, 20*time.Second)
	return nil
}

// stopSerf stops a random member (Shutdown, or Leave then Shutdown),
// waits until every other member has seen it fail or leave, then starts a
// fresh member in its place.
func stopSerf(ctx context.Context, c *bench.SerfCluster, n int, crash bool, timeout time.Duration) (bench.Outcome, error) {
	victim := c.RandomMember()
	c.Detach(victim)
	key := "leave:" + victim.Name
	if crash {
		key = "failed:" + victim.Name
	}
	arr := bench.NewArrivals(c.Names())
	forget := c.Expect(key, arr)
	done := make(chan error, 1)
	arr.Start()
	go func() {
		if crash {
			done <- victim.Serf.Shutdown()
			return
		}
		err := victim.Serf.Leave()
		done <- errors.Join(err, victim.Serf.Shutdown())
	}()
	out := arr.Wait(ctx, timeout)
	forget()
	if err := <-done; err != nil {
		bench.Progress("  serf stop of %s: %v", victim.Name, err)
	}
	if _, err := c.Add(); err != nil {
		return out, err
	}
	if err := c.WaitMembers(ctx, n); err != nil {
		return out, err
	}
	bench.Settle(ctx, c.Transports(), bench.SettledRate, 20*time.Second)
	return out, nil
}

// idleTraffic is each member's send rate over a window in which nothing
// changes.
func idleTraffic(ctx context.Context, ts []*bench.CountingTransport, window time.Duration) ([]float64, map[string]float64) {
	tr := bench.StartTraffic(ts)
	select {
	case <-ctx.Done():
	case <-time.After(window):
	}
	return tr.PerMember(), tr.BySource()
}

// sourceFigures breaks idle traffic down by class, namecast beside serf,
// so a change in the total points at its cause.
func sourceFigures(scenario, cs string, nc, sf map[string]float64) []bench.Figure {
	var out []bench.Figure
	for _, name := range bench.SourceNames() {
		if nc[name] == 0 && sf[name] == 0 {
			continue
		}
		f := bench.Figure{Scenario: scenario, Case: cs, Metric: "idle: " + name, Unit: bench.UnitBytesPS,
			Namecast: bench.Summarize([]float64{nc[name]})}.WithPeer(bench.Summarize([]float64{sf[name]}))
		f.Note = "mean bytes/s per member of this class of idle traffic"
		out = append(out, f)
	}
	return out
}

// idleCost is idleTraffic and, as the process runs nothing but the cluster
// then, the CPU each member used: process CPU time over the window, over
// the members, in percent of one core.
func idleCost(ctx context.Context, ts []*bench.CountingTransport, window time.Duration) (rates []float64, cpu float64) {
	tr := bench.StartTraffic(ts)
	cpu0, t0 := bench.CPUTime(), time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(window):
	}
	cpu = 100 * (bench.CPUTime() - cpu0).Seconds() / time.Since(t0).Seconds() / float64(len(ts))
	return tr.PerMember(), cpu
}
