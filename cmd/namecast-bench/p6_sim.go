package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/bench"
)

// P6 runs namecast's real gossip and routes code, and real serf.Serf, over
// the in-memory gossiptest network with LAN-like latency, in virtual time
// (a testing/synctest bubble): thousands of members fit two cores because
// the seconds memberlist waits cost nothing. Each system runs alone in its
// own bubble, so CPU and heap per member are its own. Virtual time has no
// CPU queueing: a packet is handled the moment it is due, however busy the
// process, so latencies here are what the protocol does on an idle LAN,
// not what a loaded host adds (docs/performance.md).
func runP6(ctx context.Context, o *options) ([]bench.Figure, error) {
	defer p6GC(o.p6GOGC)()
	var figs []bench.Figure
	for _, profile := range o.p6Profiles {
		for _, n := range o.p6N {
			idle := o.p6IdleFor
			if idle == 0 {
				var err error
				if idle, err = bench.PushPullRound(profile, n); err != nil {
					return figs, err
				}
			}
			cfg := bench.SimConfig{N: n, Profile: profile, Loss: o.p6Loss, MinDelay: 100 * time.Microsecond, MaxDelay: time.Millisecond,
				Trials: o.p6Trials, Crashes: o.p6Crashes, IdleFor: idle, Seed: int64(n), Timeout: 15 * time.Second,
				Logf: func(f string, a ...any) { bench.Progress(f, a...) }}
			var res [2]bench.SimResult
			var have [2]bool
			for i, sys := range []string{"namecast", "serf"} {
				var err error
				if res[i], have[i], err = p6Result(ctx, o, sys, cfg); err != nil {
					return figs, err
				}
			}
			nc, sf := res[0], res[1]
			figs = append(figs, p6Figures(cfg, o.p6Loss, nc, sf, have[0] && have[1])...)
		}
	}
	return figs, nil
}

// p6Result is sys's result at cfg: read from -p6-results when a run saved
// it there, else simulated if sys is in -p6-systems (and saved there).
// That lets the two systems of a size that needs the machine's memory run
// as two processes at once, and a third run judge them side by side.
func p6Result(ctx context.Context, o *options, sys string, cfg bench.SimConfig) (res bench.SimResult, ok bool, err error) {
	file := ""
	if o.p6Results != "" {
		file = filepath.Join(o.p6Results, fmt.Sprintf("p6-%s-%d-loss%g-%s.json", cfg.Profile, cfg.N, cfg.Loss, sys))
		if b, err := os.ReadFile(file); err == nil {
			bench.Progress("  N=%d %s: %s read from %s", cfg.N, cfg.Profile, sys, file)
			return res, true, json.Unmarshal(b, &res)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return res, false, err
		}
	}
	if !slices.Contains(o.p6Systems, sys) {
		return res, false, nil
	}
	bench.Progress("  N=%d %s: %s", cfg.N, cfg.Profile, sys)
	var s interface{} = &bench.SimNamecast{Profile: cfg.Profile}
	if sys == "serf" {
		s = &bench.SimSerf{Profile: cfg.Profile}
	}
	if res, err = simulate(ctx, s, sys == "serf", cfg); err != nil {
		return res, false, fmt.Errorf("%s N=%d: %w", sys, cfg.N, err)
	}
	bench.ReleaseMemory()
	if file != "" {
		b, err := json.Marshal(res)
		if err == nil {
			err = os.WriteFile(file, b, 0o644)
		}
		if err != nil {
			return res, true, fmt.Errorf("saving %s's result: %w", sys, err)
		}
	}
	return res, true, nil
}

// p6GC sets the collector for the simulation and returns what restores
// it. Thousands of members allocate fast (memberlist compresses every
// packet with a fresh 64 KiB LZW table) over a live heap that grows as
// N², and at GOGC=100 marking took half the run's CPU; a larger GOGC
// trades memory for that time, and the soft limit keeps the process
// within a share of the shared machine (the collector works harder near
// it rather than growing past it). Heap per member is measured after an
// explicit collection, so neither changes a figure.
func p6GC(gogc int) (restore func()) {
	oldPct := debug.SetGCPercent(gogc)
	oldLimit := debug.SetMemoryLimit(-1)
	if oldLimit == math.MaxInt64 {
		debug.SetMemoryLimit(p6MemoryLimit)
	}
	return func() {
		debug.SetGCPercent(oldPct)
		debug.SetMemoryLimit(oldLimit)
	}
}

// p6MemoryLimit is the soft limit p6GC sets unless GOMEMLIMIT did.
const p6MemoryLimit = 10 << 30

func simulate(ctx context.Context, sys interface{}, serf bool, cfg bench.SimConfig) (bench.SimResult, error) {
	var res bench.SimResult
	var runErr error
	err := bench.InBubble(func(t *testing.T) {
		net := gossiptest.NewNetwork(cfg.Seed)
		switch s := sys.(type) {
		case *bench.SimNamecast:
			res, runErr = bench.RunSim(ctx, s, net, serf, cfg)
		case *bench.SimSerf:
			res, runErr = bench.RunSim(ctx, s, net, serf, cfg)
		}
		net.Close()
		// memberlist leaves probe goroutines on their timers after
		// Shutdown; the bubble's clock must run for them to end.
		time.Sleep(time.Minute)
	})
	if runErr != nil {
		return res, runErr
	}
	return res, err
}

// p6Figures builds a size's figures; judged only when both systems ran
// (both), since a goal compares them.
func p6Figures(cfg bench.SimConfig, loss float64, nc, sf bench.SimResult, both bool) []bench.Figure {
	cs := fmt.Sprintf("N=%d %s", cfg.N, cfg.Profile)
	if loss > 0 {
		cs += fmt.Sprintf(" loss %.0f%%", 100*loss)
	}
	sec := func(v float64) bench.Stat { return bench.Summarize([]float64{v}) }
	form := bench.Figure{Scenario: "P6", Case: cs, Metric: "formation (all see all)", Unit: bench.UnitSeconds,
		Namecast: sec(nc.Formation)}.WithPeer(sec(sf.Formation))
	form.Note = "virtual time from the first start; members start 10 ms apart, each joining a random earlier one"
	last := bench.Figure{Scenario: "P6", Case: cs, Metric: "last member has it", Unit: bench.UnitSeconds,
		Namecast: nc.Last.Stat()}.WithPeer(sf.Last.Stat())
	ok := last.Namecast.P99 <= last.Serf.P99 && last.Namecast.Missed == 0 && nc.Each.Missed == 0
	if cfg.N >= 1000 {
		last = last.Judge("p99 ≤ 1s and ≤ serf p99, none missed", ok && last.Namecast.P99 <= 1)
	} else {
		last = last.Judge("p99 ≤ serf p99, none missed", ok)
	}
	last.Note = "registration (serf: user event) on a random member → every other member has it; virtual time"
	each := bench.Figure{Scenario: "P6", Case: cs, Metric: "each delivery", Unit: bench.UnitSeconds,
		Namecast: nc.Each.Stat()}.WithPeer(sf.Each.Stat())
	crash := bench.Figure{Scenario: "P6", Case: cs, Metric: "crash → gone everywhere", Unit: bench.UnitSeconds,
		Namecast: nc.Crash.Stat()}.WithPeer(sf.Crash.Stat())
	crash = crash.Judge("p99 ≤ serf p99 + 0.5s", crash.Namecast.P99 <= crash.Serf.P99+0.5 && crash.Namecast.Missed == 0)
	crash.Note = "crash → every other member dropped its routes (serf: saw member-failed); = detection + verdict below"
	crashEach := bench.Figure{Scenario: "P6", Case: cs, Metric: "crash → gone, each member", Unit: bench.UnitSeconds,
		Namecast: nc.CrashEach.Stat()}.WithPeer(sf.CrashEach.Stat())
	detect := bench.Figure{Scenario: "P6", Case: cs, Metric: "crash → first suspicion", Unit: bench.UnitSeconds,
		Namecast: nc.Detect.Stat()}.WithPeer(sf.Detect.Stat())
	detect.Note = "until some member's probe of the crashed one fails: memberlist's probe schedule, the same code in both; luck with few crashes"
	verdict := bench.Figure{Scenario: "P6", Case: cs, Metric: "first suspicion → gone everywhere", Unit: bench.UnitSeconds,
		Namecast: nc.Verdict.Stat()}.WithPeer(sf.Verdict.Stat())
	verdict.Note = "suspicion timeout, the verdict's spread and what each system does on it: where a system adds its own delay"
	idle := bench.Figure{Scenario: "P6", Case: cs, Metric: "idle traffic per member", Unit: bench.UnitBytesPS,
		Namecast: bench.Summarize(nc.Idle)}.WithPeer(bench.Summarize(sf.Idle))
	idle = idle.Judge("p99 ≤ 1.2× serf p99", idle.Ratio <= 1.2)
	idle.Note = fmt.Sprintf("bytes sent per virtual second over %v, p50/p99/max across members", cfg.IdleFor)
	cpu := bench.Figure{Scenario: "P6", Case: cs, Metric: "CPU per member", Unit: bench.UnitPercent,
		Namecast: sec(100 * nc.CPU)}.WithPeer(sec(100 * sf.CPU))
	cpu.Note = "process CPU time per virtual second while idle, over N, in % of one core; no queueing in virtual time"
	heap := bench.Figure{Scenario: "P6", Case: cs, Metric: "heap per member", Unit: bench.UnitMB,
		Namecast: sec(nc.HeapPerMbr)}.WithPeer(sec(sf.HeapPerMbr))
	if !both {
		last.Goal, last.Verdict, crash.Goal, crash.Verdict, idle.Goal, idle.Verdict = "", "", "", "", "", ""
	}
	figs := []bench.Figure{form, last, each, crash, crashEach, detect, verdict, idle, cpu, heap}
	return append(figs, sourceFigures("P6", cs, nc.Sources, sf.Sources)...)
}
