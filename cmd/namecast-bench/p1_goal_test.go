package main

import (
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/bench"
)

// P1's goal is issue 26's: at N=50 and N=100 every agent has a change (and
// has lost a withdrawn one) within 100 ms at p99, no delivery missed, and
// no later than Serf's p99 in the same run; elsewhere no later than Serf.
func TestP1GoalIsIssue26s(t *testing.T) {
	trials := func(p99 time.Duration, missed int) bench.Durations {
		var d bench.Durations
		for i := range 100 {
			v := 10 * time.Millisecond
			if i >= 98 {
				v = p99
			}
			d.Add(v, i == 99 && missed > 0)
		}
		return d
	}
	prop := func(p99 time.Duration, missed int) propagation {
		d := trials(p99, missed)
		return propagation{last: d, gone: d, expired: d}
	}
	serf := prop(700*time.Millisecond, 0)
	cases := []struct {
		name string
		n    int
		nc   propagation
		want string // the verdict
		goal string // a part of the goal
	}{
		{"N=50 tail over 100 ms, under serf", 50, prop(200*time.Millisecond, 0), bench.Miss, "100ms"},
		{"N=100 tail over 100 ms, under serf", 100, prop(200*time.Millisecond, 0), bench.Miss, "100ms"},
		{"N=50 within 100 ms", 50, prop(90*time.Millisecond, 0), bench.Pass, "100ms"},
		{"N=100 within 100 ms", 100, prop(90*time.Millisecond, 0), bench.Pass, "100ms"},
		{"N=50 within 100 ms, one missed", 50, prop(90*time.Millisecond, 1), bench.Miss, "none missed"},
		{"N=10 under serf", 10, prop(200*time.Millisecond, 0), bench.Pass, "serf p99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			figs := append(p1Figures("P1", c.n, c.nc, serf), withdrawFigures(c.n, c.nc, serf)...)
			judged := 0
			for _, f := range figs {
				switch f.Metric {
				case "last member has it", "withdrawn → gone on last member", "TTL end → gone on last member":
				default:
					continue
				}
				judged++
				if f.Verdict != c.want || !strings.Contains(f.Goal, c.goal) {
					t.Errorf("%s: goal %q verdict %s; want %s on a goal naming %q (p99 %.3fs, serf %.3fs)",
						f.Metric, f.Goal, f.Verdict, c.want, c.goal, f.Namecast.P99, f.Serf.P99)
				}
			}
			if judged != 3 {
				t.Errorf("judged %d propagation figures, want 3", judged)
			}
		})
	}
}
