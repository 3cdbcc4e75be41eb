package main

import (
	"context"
	"fmt"

	"github.com/namecast/namecast/internal/bench"
)

// runP5 tries each size in turn and stops at the first this process cannot
// sustain: the cluster does not form, or a registration is lost (a trial
// times out). The sizes reached are what docs/performance.md extrapolates
// from.
func runP5(ctx context.Context, o *options) ([]bench.Figure, error) {
	var figs []bench.Figure
	for _, n := range o.p5N {
		nc, sf, err := comparePropagation(ctx, n, o.p5Trials, false)
		if err != nil {
			figs = append(figs, bench.Figure{Scenario: "P5", Case: caseName(n, "lan"), Metric: "sustained",
				Verdict: bench.Miss, Note: err.Error()})
			bench.Progress("  N=%d not sustained: %v", n, err)
			break
		}
		formed := bench.Figure{Scenario: "P5", Case: caseName(n, "lan"), Metric: "formation (all see all)", Unit: bench.UnitSeconds,
			Namecast: bench.Summarize([]float64{nc.setup.Seconds()})}.WithPeer(bench.Summarize([]float64{sf.setup.Seconds()}))
		formed.Note = fmt.Sprintf("sequential starts, each joining the first member, until every member sees N alive; "+
			"members joined by hand after a view lacked them 15s (bench.Cluster.WaitMembers): namecast %d, serf %d", nc.nudge, sf.nudge)
		figs = append(figs, formed)
		figs = append(figs, p1Figures("P5", n, nc, sf)...)
		ok := nc.last.Missed == 0
		figs = append(figs, bench.Figure{Scenario: "P5", Case: caseName(n, "lan"), Metric: "sustained",
			Verdict: map[bool]string{true: bench.Pass, false: bench.Miss}[ok],
			Note:    fmt.Sprintf("formed, and %d of %d registrations reached every agent", len(nc.last.Samples)-nc.last.Missed, len(nc.last.Samples))})
		if !ok {
			break
		}
	}
	return figs, nil
}
