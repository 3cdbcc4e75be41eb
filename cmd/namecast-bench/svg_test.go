package main

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/namecast/namecast/internal/bench"
)

// -plot draws saved reports: each plot is well-formed SVG with a mark for
// every series, and one the reports have no figures for is not written.
func TestPlotSavedReports(t *testing.T) {
	dir := t.TempDir()
	stat := func(samples ...float64) bench.Stat { return bench.Summarize(samples) }
	serf := func(samples ...float64) *bench.Stat { s := stat(samples...); return &s }
	rep := bench.NewReport(nil)
	rep.Figures = []bench.Figure{
		{Scenario: "P1", Case: "N=10 lan", Metric: "each delivery", Unit: bench.UnitSeconds, Namecast: stat(0.004, 0.01, 0.2), Serf: serf(0.1, 0.3, 0.5)},
		{Scenario: "P2", Case: "N=10 lan", Metric: "crash → gone everywhere", Unit: bench.UnitSeconds, Namecast: stat(5.1, 6.2), Serf: serf(5.5, 7.9)},
		{Scenario: "P2", Case: "N=10 lan", Metric: "leave → gone everywhere", Unit: bench.UnitSeconds, Namecast: stat(0.002), Serf: serf(0.7)},
	}
	saved := filepath.Join(dir, "run.json")
	if err := writeJSONFile(saved, rep); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "svg")
	var stdout, stderr strings.Builder
	if code := run(t.Context(), []string{"-plot", saved, "-svg", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for f, wants := range map[string][]string{
		"p1-delivery.svg":   {"namecast N=10 lan", "Serf N=10 lan", "<path", "stroke-dasharray"},
		"p2-withdrawal.svg": {"N=10 lan, leave · Serf", "<circle", namecastColor, serfColor},
	} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("%s not written: %v (stdout %q)", f, err, stdout.String())
		}
		dec := xml.NewDecoder(strings.NewReader(string(b)))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s is not well-formed: %v", f, err)
			}
		}
		for _, want := range wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "p6-cost.svg")); err == nil {
		t.Error("p6-cost.svg written without P6 figures")
	}
	// -plot alone has nowhere to write.
	if code := run(t.Context(), []string{"-plot", saved}, io.Discard, io.Discard); code != 2 {
		t.Errorf("-plot without -svg: exit %d, want 2", code)
	}
}
