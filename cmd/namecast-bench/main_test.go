package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/namecast/namecast/internal/bench"
	"github.com/namecast/namecast/internal/testutil"
)

// TestMain lets P4 re-run the test binary as its separate-process agent.
func TestMain(m *testing.M) {
	if isChild() {
		os.Exit(runChild(os.Stdout))
	}
	os.Exit(m.Run())
}

// TestSmoke runs the -short variant of every scenario, as CI does, and
// checks that each figure is sane: measured, positive where it must be,
// ordered p50 ≤ p99 ≤ max, with a serf figure wherever one is compared
// and a verdict wherever there is a goal. It checks the machinery, not the
// goals: a slow CI machine may MISS a goal without failing the test.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts clusters for about a minute; skipped with -short")
	}
	testutil.CheckLeaks(t)
	// P6's bubble comes from this test, not from a testing.M of its own.
	bench.Bubble = func(f func(*testing.T)) error { synctest.Test(t, f); return nil }
	defer func() { bench.Bubble = nil }()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-short", "-json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run exited %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s", err, stdout.String())
	}
	seen := map[string]int{}
	for _, f := range rep.Figures {
		seen[f.Scenario]++
		checkFigure(t, f)
	}
	for _, sc := range scenarios {
		if seen[sc.id] == 0 {
			t.Errorf("no figures for %s", sc.id)
		}
	}
	var tables bytes.Buffer
	rep.WriteTables(&tables)
	for _, want := range []string{"P1", "P5", "P6", "idle traffic per member", "idle: probes", "last member has it", "serf p99", "HTTP c=4", "RocketMQ c=1 w=16", bench.Pass} {
		if !strings.Contains(tables.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, tables.String())
		}
	}
}

func checkFigure(t *testing.T, f bench.Figure) {
	t.Helper()
	name := f.Scenario + " " + f.Case + " " + f.Metric
	if f.Goal != "" && f.Verdict != bench.Pass && f.Verdict != bench.Miss {
		t.Errorf("%s: goal %q without a verdict", name, f.Goal)
	}
	if f.Unit == "" {
		return // a verdict-only row, such as P5's "sustained"
	}
	stats := map[string]*bench.Stat{"namecast": &f.Namecast, "serf": f.Serf}
	for who, s := range stats {
		if s == nil {
			continue
		}
		if s.Trials == 0 {
			t.Errorf("%s: %s has no samples", name, who)
			continue
		}
		if !(s.P50 <= s.P99 && s.P99 <= s.Max) {
			t.Errorf("%s: %s p50 %g, p99 %g, max %g out of order", name, who, s.P50, s.P99, s.Max)
		}
		// Heap growth may be 0 when a GC returned more than a join took.
		// A class of idle traffic may be absent from one system.
		if f.Unit != bench.UnitMB && !strings.HasPrefix(f.Metric, "idle: ") && s.P50 <= 0 {
			t.Errorf("%s: %s p50 is %g, want > 0", name, who, s.P50)
		}
		// Serf missing a delivery is a measurement, not broken machinery:
		// at N=5 each member relays an event 4 times, so now and then one
		// member is never picked, and serf repairs that only by push/pull,
		// 30 s apart, after P1's 15 s timeout (1 of 250 trials here; the
		// smoke run's 5 trials failed CI so). The table reports it.
		if s.Missed > 0 && who == "namecast" {
			t.Errorf("%s: %s missed %d of %d trials", name, who, s.Missed, s.Trials)
		}
	}
	if f.Unit == bench.UnitSeconds && (f.Scenario == "P1" || f.Scenario == "P2") && f.Serf == nil {
		t.Errorf("%s: no serf figure to compare with", name)
	}
}
