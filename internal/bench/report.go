package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// Units figures are kept in; values are stored in these, formatted on print.
const (
	UnitSeconds = "s"
	UnitBytesPS = "B/s"
	UnitReqPS   = "req/s"
	UnitMB      = "MB"
	UnitBytes   = "B"
	UnitPercent = "%"
)

// Verdicts against a goal.
const (
	Pass = "PASS"
	Miss = "MISS"
)

// Figure is one row of a scenario's table.
type Figure struct {
	Scenario string `json:"scenario"` // P1 ... P5
	Case     string `json:"case"`     // e.g. "N=50 lan"
	Metric   string `json:"metric"`
	Unit     string `json:"unit"`
	Namecast Stat   `json:"namecast"`
	// Serf is the peer measured in the same run, when there is one.
	Serf *Stat `json:"serf,omitempty"`
	// Ratio is namecast's p99 over serf's: below 1 is faster or cheaper.
	Ratio   float64 `json:"ratio,omitempty"`
	Goal    string  `json:"goal,omitempty"`
	Verdict string  `json:"verdict,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// WithPeer sets the serf figure and the ratio of the p99s.
func (f Figure) WithPeer(s Stat) Figure {
	f.Serf = &s
	if s.P99 > 0 {
		f.Ratio = f.Namecast.P99 / s.P99
	}
	return f
}

// Judge records a goal and whether the figure meets it.
func (f Figure) Judge(goal string, ok bool) Figure {
	f.Goal, f.Verdict = goal, Miss
	if ok {
		f.Verdict = Pass
	}
	return f
}

// Host describes the machine a report was made on.
type Host struct {
	OS, Arch   string
	CPUs       int
	GOMAXPROCS int
	GoVersion  string
}

// Report is a whole run: the JSON written by --json, and the tables.
type Report struct {
	Started  time.Time         `json:"started"`
	Duration float64           `json:"duration_s"`
	Host     Host              `json:"host"`
	Args     []string          `json:"args"`
	Titles   map[string]string `json:"titles"`
	// Load is the machine's one-minute load average as each scenario
	// ended: above the core count, other work competed with the run.
	Load    map[string]float64 `json:"load"`
	Figures []Figure           `json:"figures"`
	Errors  []string           `json:"errors,omitempty"`
}

// NewReport starts a report for this process and machine.
func NewReport(args []string) *Report {
	return &Report{Started: time.Now(), Args: args, Titles: map[string]string{}, Load: map[string]float64{},
		Host: Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTables prints one aligned table per scenario, in the order the
// scenarios first appear.
func (r *Report) WriteTables(w io.Writer) {
	var order []string
	by := map[string][]Figure{}
	for _, f := range r.Figures {
		if _, ok := by[f.Scenario]; !ok {
			order = append(order, f.Scenario)
		}
		by[f.Scenario] = append(by[f.Scenario], f)
	}
	for _, sc := range order {
		fmt.Fprintf(w, "\n%s  %s  [load avg %.2f on %d cores]\n", sc, r.Titles[sc], r.Load[sc], r.Host.CPUs)
		tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "case\tmetric\ttrials\tp50\tp99\tmax\tserf p50\tserf p99\tserf max\tratio\tgoal\tverdict\t")
		for _, f := range by[sc] {
			row := []string{f.Case, f.Metric, trials(f.Namecast)}
			if f.Namecast.Trials > 0 {
				row = append(row, format(f.Unit, f.Namecast.P50), format(f.Unit, f.Namecast.P99), format(f.Unit, f.Namecast.Max))
			} else {
				row = append(row, "-", "-", "-")
			}
			if f.Serf != nil {
				row = append(row, format(f.Unit, f.Serf.P50), format(f.Unit, f.Serf.P99), format(f.Unit, f.Serf.Max))
			} else {
				row = append(row, "-", "-", "-")
			}
			ratio := "-"
			if f.Ratio > 0 {
				ratio = fmt.Sprintf("%.2f", f.Ratio)
			}
			row = append(row, ratio, orDash(f.Goal), orDash(f.Verdict))
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
		for _, f := range by[sc] {
			if f.Note != "" {
				fmt.Fprintf(w, "  %s %s: %s\n", f.Case, f.Metric, f.Note)
			}
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nERROR %s\n", e)
	}
}

func trials(s Stat) string {
	if s.Trials == 0 {
		return "-"
	}
	if s.Missed > 0 {
		return fmt.Sprintf("%d (%d missed)", s.Trials, s.Missed)
	}
	return fmt.Sprint(s.Trials)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func format(unit string, v float64) string {
	switch unit {
	case UnitSeconds:
		switch {
		case v < 1e-3:
			return fmt.Sprintf("%.0fµs", v*1e6)
		case v < 1e-2:
			return fmt.Sprintf("%.2fms", v*1e3)
		case v < 1:
			return fmt.Sprintf("%.0fms", v*1e3)
		default:
			return fmt.Sprintf("%.2fs", v)
		}
	case UnitBytesPS:
		return fmt.Sprintf("%.0f B/s", v)
	case UnitReqPS:
		return fmt.Sprintf("%.0f/s", v)
	case UnitMB:
		return fmt.Sprintf("%.1f MB", v)
	case UnitBytes:
		return fmt.Sprintf("%.0f B", v)
	case UnitPercent:
		return fmt.Sprintf("%.2f%%", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

// Progress reports what the run is doing on stderr, so stdout holds only
// the tables (or the JSON).
func Progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
