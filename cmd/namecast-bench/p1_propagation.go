package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/namecast/namecast/internal/bench"
)

// p1Timeout bounds one propagation trial; a trial over it is a lost
// delivery, reported as missed.
const p1Timeout = 15 * time.Second

// propagation is what P1 (and P5) measure per system at one size.
type propagation struct {
	last  bench.Durations // per trial: until the last member had it
	each  bench.Durations // every member's own delay
	setup time.Duration   // until the cluster had formed
	heap  float64         // heap in use per member once formed, MB
	nudge int             // lagging members helped to form (see WaitMembers)
}

func runP1(ctx context.Context, o *options) ([]bench.Figure, error) {
	var figs []bench.Figure
	for _, n := range o.p1N {
		nc, sf, err := comparePropagation(ctx, n, o.p1Trials)
		if err != nil {
			return figs, err
		}
		figs = append(figs, p1Figures("P1", n, nc, sf)...)
	}
	return figs, nil
}

// comparePropagation measures namecast, then serf, at size n. They run one
// after the other, not side by side, so neither steals the other's CPU.
func comparePropagation(ctx context.Context, n, trials int) (nc, sf propagation, err error) {
	if nc, err = propagateNamecast(ctx, n, trials); err != nil {
		return nc, sf, fmt.Errorf("namecast N=%d: %w", n, err)
	}
	if sf, err = propagateSerf(ctx, n, trials); err != nil {
		return nc, sf, fmt.Errorf("serf N=%d: %w", n, err)
	}
	return nc, sf, nil
}

func p1Figures(sc string, n int, nc, sf propagation) []bench.Figure {
	last := bench.Figure{Scenario: sc, Case: caseName(n, "lan"), Metric: "last member has it", Unit: bench.UnitSeconds,
		Namecast: nc.last.Stat()}.WithPeer(sf.last.Stat())
	if n == 50 {
		last = last.Judge("p99 ≤ serf p99 and ≤ 1s", last.Namecast.P99 <= last.Serf.P99 && last.Namecast.P99 <= 1)
	} else {
		last = last.Judge("p99 ≤ serf p99", last.Namecast.P99 <= last.Serf.P99)
	}
	each := bench.Figure{Scenario: sc, Case: caseName(n, "lan"), Metric: "each delivery", Unit: bench.UnitSeconds,
		Namecast: nc.each.Stat()}.WithPeer(sf.each.Stat())
	each.Note = fmt.Sprintf("%d deliveries each; missed: namecast %d, serf %d (trial timeout %v)",
		len(nc.each.Samples), nc.last.Missed, sf.last.Missed, p1Timeout)
	heap := bench.Figure{Scenario: sc, Case: caseName(n, "lan"), Metric: "heap per member", Unit: bench.UnitMB,
		Namecast: bench.Summarize([]float64{nc.heap})}.WithPeer(bench.Summarize([]float64{sf.heap}))
	heap.Note = "heap in use after GC once formed, over N; namecast includes each agent's HTTP server and metrics registry"
	return []bench.Figure{last, each, heap}
}

func propagateNamecast(ctx context.Context, n, trials int) (propagation, error) {
	var res propagation
	bench.Progress("  namecast: starting %d agents", n)
	h0 := bench.HeapInUse()
	t0 := time.Now()
	c, err := bench.StartCluster(ctx, n, "lan")
	if err != nil {
		return res, err
	}
	defer c.Close()
	res.setup = time.Since(t0)
	res.heap = bench.MB(bench.HeapGrowth(h0)) / float64(n)
	res.nudge = c.Nudges()
	bench.Progress("  namecast: formed in %v (%d nudged), heap %.2f MB per member", res.setup.Round(time.Millisecond), res.nudge, res.heap)
	agents := c.Running()
	for i := range trials {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		origin := agents[rand.IntN(len(agents))]
		topic := fmt.Sprintf("p1-%d-%d", n, i)
		arr := bench.NewArrivals(names(agents))
		wctx, cancel := context.WithCancel(ctx)
		stop := bench.WatchTables(wctx, agents, arr, hasRoute(topic))
		arr.Start()
		_, err := origin.Agent.RegisterBroker(brokerOf("b-"+topic, topic), 0)
		out := arr.Wait(ctx, p1Timeout)
		cancel()
		stop()
		if err != nil {
			return res, err
		}
		record(&res, out)
		pause(ctx)
	}
	bench.Progress("  namecast N=%d: p50 %.3fs max %.3fs", n, res.last.Stat().P50, res.last.Stat().Max)
	return res, nil
}

func propagateSerf(ctx context.Context, n, trials int) (propagation, error) {
	var res propagation
	bench.Progress("  serf: starting %d members", n)
	h0 := bench.HeapInUse()
	t0 := time.Now()
	c, err := bench.StartSerfCluster(ctx, n, serfConfig("lan"))
	if err != nil {
		return res, err
	}
	defer c.Close()
	res.setup = time.Since(t0)
	res.heap = bench.MB(bench.HeapGrowth(h0)) / float64(n)
	res.nudge = c.Nudges()
	bench.Progress("  serf: formed in %v (%d nudged), heap %.2f MB per member", res.setup.Round(time.Millisecond), res.nudge, res.heap)
	members := c.Running()
	for i := range trials {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		origin := members[rand.IntN(len(members))]
		name := fmt.Sprintf("p1-%d-%d", n, i)
		arr := bench.NewArrivals(c.Names())
		forget := c.Expect("user:"+name, arr)
		arr.Start()
		err := origin.Serf.UserEvent(name, payloadOf(brokerOf("b-"+name, name)), false)
		out := arr.Wait(ctx, p1Timeout)
		forget()
		if err != nil {
			return res, err
		}
		record(&res, out)
		pause(ctx)
	}
	bench.Progress("  serf N=%d: p50 %.3fs max %.3fs", n, res.last.Stat().P50, res.last.Stat().Max)
	return res, nil
}

func record(p *propagation, out bench.Outcome) {
	if out.Last > time.Second {
		slow := 0
		for _, d := range out.Each {
			if d > time.Second {
				slow++
			}
		}
		bench.Progress("    trial %d: last member after %v; %d members over 1s, %d missing", len(p.last.Samples), out.Last.Round(time.Millisecond), slow, out.Missing)
	}
	p.last.Add(out.Last, out.TimedOut)
	for _, d := range out.Each {
		p.each.Add(d, false)
	}
	for range out.Missing {
		p.each.Add(p1Timeout, true)
	}
}
