package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/namecast/namecast/internal/bench"
)

// Plots of a report, as SVG files a page can embed (docs/performance.md):
//
//	p1-delivery.svg    P1: each delivery's time, as a CDF, namecast beside Serf
//	p2-withdrawal.svg  P2: crash and leave → routes gone everywhere, every trial
//	p6-cost.svg        P6: idle traffic, heap and propagation against N
//
// -svg DIR writes them after a run; with -plot a.json,b.json they are drawn
// from saved reports instead, nothing run. A plot whose figures the
// report lacks is not written.

// writePlots writes every plot rep has figures for into dir and returns
// the files written.
func writePlots(dir string, rep *bench.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, p := range []struct {
		file string
		make func([]bench.Figure) *chart
	}{{"p1-delivery.svg", p1Chart}, {"p2-withdrawal.svg", p2Chart}, {"p6-cost.svg", p6Chart}} {
		c := p.make(rep.Figures)
		if c == nil {
			continue
		}
		path := filepath.Join(dir, p.file)
		f, err := os.Create(path)
		if err != nil {
			return written, err
		}
		c.render(f)
		if err := f.Close(); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// readReports merges the figures of saved JSON reports.
func readReports(paths []string) (*bench.Report, error) {
	rep := &bench.Report{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r bench.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		rep.Figures = append(rep.Figures, r.Figures...)
	}
	return rep, nil
}

// Each system keeps its color on every plot.
const (
	namecastColor = "#1f77b4"
	serfColor     = "#d62728"
)

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"}

// p1Chart: the distribution of every single delivery (one registration
// reaching one agent), per cluster size, namecast solid, Serf dashed.
func p1Chart(figs []bench.Figure) *chart {
	c := &chart{title: "P1: registration → readable on each agent (CDF of every delivery)",
		xLabel: "time after the registration (log scale)", yLabel: "fraction of deliveries", logX: true, unit: bench.UnitSeconds}
	i := 0
	for _, f := range figs {
		if f.Scenario != "P1" || f.Metric != "each delivery" || len(f.Namecast.Samples) == 0 {
			continue
		}
		color := palette[i%len(palette)]
		i++
		c.series = append(c.series, series{name: "namecast " + f.Case, color: color, pts: cdf(f.Namecast.Samples)})
		if f.Serf != nil && len(f.Serf.Samples) > 0 {
			c.series = append(c.series, series{name: "Serf " + f.Case, color: color, dashed: true, pts: cdf(f.Serf.Samples)})
		}
	}
	if len(c.series) == 0 {
		return nil
	}
	c.yMin, c.yMax, c.yFixed = 0, 1, true
	return c
}

// cdf is the step function of sorted samples; past cdfPoints samples it
// steps at evenly spaced ranks only (the first and last kept), which
// keeps a plot of thousands of deliveries small and looks the same.
func cdf(sorted []float64) [][2]float64 {
	n := len(sorted)
	step := max(1, n/cdfPoints)
	pts := make([][2]float64, 0, 2*(n/step+2))
	for i := 0; i < n; i += step {
		j := min(i+step, n) - 1 // the last sample of this step
		if i+step >= n {
			j = n - 1
		}
		pts = append(pts, [2]float64{sorted[j], float64(i) / float64(n)}, [2]float64{sorted[j], float64(j+1) / float64(n)})
	}
	return pts
}

const cdfPoints = 400

// p2Chart: one row per case and metric, each system's trials as dots (or,
// from a report without samples, its p50, p99 and max).
func p2Chart(figs []bench.Figure) *chart {
	c := &chart{title: "P2: crash or leave → the agent's routes gone on every agent (each trial)",
		xLabel: "time (log scale)", logX: true, unit: bench.UnitSeconds, rows: true}
	for _, f := range figs {
		if f.Scenario != "P2" || !strings.Contains(f.Metric, "gone everywhere") || f.Serf == nil {
			continue
		}
		label := f.Case + ", " + strings.TrimSuffix(f.Metric, " → gone everywhere")
		for _, sys := range []struct {
			name  string
			color string
			st    bench.Stat
		}{{"namecast", namecastColor, f.Namecast}, {"Serf", serfColor, *f.Serf}} {
			vals := sys.st.Samples
			if len(vals) == 0 {
				vals = []float64{sys.st.P50, sys.st.P99, sys.st.Max}
				c.title = strings.Replace(c.title, "(each trial)", "(p50, p99 and max of the trials)", 1)
			}
			y := float64(len(c.rowLabels))
			var pts [][2]float64
			for _, v := range vals {
				pts = append(pts, [2]float64{v, y})
			}
			c.series = append(c.series, series{name: sys.name, color: sys.color, pts: pts, dots: true})
			c.rowLabels = append(c.rowLabels, label+" · "+sys.name)
		}
	}
	if len(c.series) == 0 {
		return nil
	}
	return c
}

var caseN = regexp.MustCompile(`^N=(\d+) (\w+)$`)

// p6Chart: what a member costs and how fast a registration spreads as the
// simulated cluster grows, p50 per size, one panel per metric.
func p6Chart(figs []bench.Figure) *chart {
	// Idle traffic is left out: it depends on the window a run counted
	// (-p6-idle), which saved runs chose differently.
	metrics := []struct{ metric, title string }{
		{"heap per member", "heap per member (MB)"},
		{"last member has it", "registration → on every member, p50 (s)"},
		{"crash → gone everywhere", "crash → routes gone everywhere, p50 (s)"},
	}
	root := &chart{title: "P6: cost, propagation and withdrawal against cluster size (simulated, lan profile)"}
	for _, m := range metrics {
		c := &chart{title: m.title, xLabel: "members (log scale)", logX: true, logY: m.metric != "crash → gone everywhere"}
		var nc, sf [][2]float64
		for _, f := range figs {
			mm := caseN.FindStringSubmatch(f.Case)
			if f.Scenario != "P6" || f.Metric != m.metric || mm == nil || mm[2] != "lan" {
				continue
			}
			n, _ := strconv.ParseFloat(mm[1], 64)
			nc = append(nc, [2]float64{n, f.Namecast.P50})
			if f.Serf != nil && f.Serf.Trials > 0 {
				sf = append(sf, [2]float64{n, f.Serf.P50})
			}
		}
		if len(nc) == 0 {
			continue
		}
		byN := func(a, b [2]float64) int { return int(a[0] - b[0]) }
		slices.SortFunc(nc, byN)
		slices.SortFunc(sf, byN)
		c.series = append(c.series, series{name: "namecast", color: namecastColor, pts: nc, marks: true})
		if len(sf) > 0 {
			c.series = append(c.series, series{name: "Serf", color: serfColor, pts: sf, marks: true, dashed: true})
		}
		root.panels = append(root.panels, c)
	}
	if len(root.panels) == 0 {
		return nil
	}
	return root
}

// chart is one plot: lines (or dots) on linear or log axes, or a row of
// panels when panels is set.
type chart struct {
	title, xLabel, yLabel string
	logX, logY            bool
	unit                  string // x values in seconds: ticks say ms/s
	yMin, yMax            float64
	yFixed                bool
	rows                  bool     // y is a row index, labelled by rowLabels
	rowLabels             []string // rows: one per y value 0, 1, ...
	series                []series
	panels                []*chart
}

type series struct {
	name        string
	color       string
	dashed      bool
	dots, marks bool // dots only (no line); a line with a dot per point
	pts         [][2]float64
}

const (
	panelW, panelH = 420.0, 300.0
	chartW, chartH = 760.0, 420.0
)

func (c *chart) render(w io.Writer) {
	width, height := chartW, chartH
	if c.rows {
		height = 100 + 24*float64(len(c.rowLabels))
	}
	if len(c.panels) > 0 {
		width, height = panelW*float64(len(c.panels)), panelH+60
	}
	height += 16 * float64(c.legendRows(width))
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%.0f" y="20" text-anchor="middle" font-size="14" font-weight="bold">%s</text>`+"\n", width/2, esc(c.title))
	if len(c.panels) > 0 {
		legend(w, c.panels[0].series, 20, 40, width-40)
		for i, p := range c.panels {
			p.draw(w, float64(i)*panelW, 50, panelW, panelH, true)
		}
	} else {
		n := legend(w, c.series, 60, 40, width-80)
		c.draw(w, 0, 30+16*float64(n), width, height-30-16*float64(n), false)
	}
	fmt.Fprintln(w, "</svg>")
}

// draw plots c into the box at (x0, y0) of size w×h.
func (c *chart) draw(out io.Writer, x0, y0, w, h float64, panel bool) {
	left, right, top, bottom := 60.0, 20.0, 20.0, 45.0
	if c.rows {
		left = 250
	}
	if panel {
		top = 25
		fmt.Fprintf(out, `<text x="%.0f" y="%.0f" text-anchor="middle" font-size="13">%s</text>`+"\n", x0+w/2, y0+14, esc(c.title))
	}
	pw, ph := w-left-right, h-top-bottom
	px, py := x0+left, y0+top

	xs, ys := c.extent()
	sx := newScale(xs[0], xs[1], c.logX, px, px+pw)
	var sy scale
	if c.rows {
		sy = scale{lo: -0.5, hi: float64(len(c.rowLabels)) - 0.5, p0: py, p1: py + ph}
	} else {
		sy = newScale(ys[0], ys[1], c.logY, py+ph, py)
	}
	fmt.Fprintf(out, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", px, py, pw, ph)
	for _, t := range sx.ticks() {
		x := sx.at(t)
		fmt.Fprintf(out, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x, py, x, py+ph)
		fmt.Fprintf(out, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, py+ph+16, esc(c.tickLabel(t)))
	}
	fmt.Fprintf(out, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px+pw/2, py+ph+36, esc(c.xLabel))
	if c.rows {
		for i, l := range c.rowLabels {
			fmt.Fprintf(out, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", px-8, sy.at(float64(i)), esc(l))
		}
	} else {
		for _, t := range sy.ticks() {
			y := sy.at(t)
			fmt.Fprintf(out, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", px, y, px+pw, y)
			fmt.Fprintf(out, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", px-6, y, esc(num(t)))
		}
		if c.yLabel != "" {
			fmt.Fprintf(out, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", x0+14, py+ph/2, esc(c.yLabel))
		}
	}
	for _, s := range c.series {
		switch {
		case s.dots:
			for _, p := range s.pts {
				fmt.Fprintf(out, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" fill-opacity="0.6"/>`+"\n", sx.at(p[0]), sy.at(p[1]), s.color)
			}
		default:
			var b strings.Builder
			for i, p := range s.pts {
				cmd := "L"
				if i == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&b, "%s%.1f %.1f ", cmd, sx.at(p[0]), sy.at(p[1]))
			}
			dash := ""
			if s.dashed {
				dash = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(out, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.TrimSpace(b.String()), s.color, dash)
			if s.marks {
				for _, p := range s.pts {
					fmt.Fprintf(out, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", sx.at(p[0]), sy.at(p[1]), s.color)
				}
			}
		}
	}
}

const legendEntryW = 185.0

// legend lays out each series name once, in rows from (x, y) no wider
// than w, and returns how many rows it took.
func legend(out io.Writer, ss []series, x, y, w float64) int {
	seen := map[string]bool{}
	perRow := max(1, int(w/legendEntryW))
	n := 0
	for _, s := range ss {
		if seen[s.name] {
			continue
		}
		seen[s.name] = true
		ex, ey := x+float64(n%perRow)*legendEntryW, y+16*float64(n/perRow)
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		if s.dots {
			fmt.Fprintf(out, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", ex+11, ey, s.color)
		} else {
			fmt.Fprintf(out, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", ex, ey, ex+22, ey, s.color, dash)
		}
		fmt.Fprintf(out, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", ex+28, ey, esc(s.name))
		n++
	}
	return (n + perRow - 1) / perRow
}

// legendRows is how many rows legend will take at this width.
func (c *chart) legendRows(width float64) int {
	ss := c.series
	if len(c.panels) > 0 {
		ss = c.panels[0].series
	}
	seen := map[string]bool{}
	for _, s := range ss {
		seen[s.name] = true
	}
	perRow := max(1, int((width-80)/legendEntryW))
	return (len(seen) + perRow - 1) / perRow
}

// extent is the data's x and y range.
func (c *chart) extent() (xs, ys [2]float64) {
	xs = [2]float64{math.Inf(1), math.Inf(-1)}
	ys = xs
	for _, s := range c.series {
		for _, p := range s.pts {
			if c.logX && p[0] <= 0 || c.logY && p[1] <= 0 {
				continue
			}
			xs = [2]float64{min(xs[0], p[0]), max(xs[1], p[0])}
			ys = [2]float64{min(ys[0], p[1]), max(ys[1], p[1])}
		}
	}
	if c.yFixed {
		ys = [2]float64{c.yMin, c.yMax}
	} else if !c.logY {
		ys[0] = min(0, ys[0])
	}
	return xs, ys
}

func (c *chart) tickLabel(v float64) string {
	if c.unit != bench.UnitSeconds {
		return num(v)
	}
	if v < 1 {
		return num(v*1000) + " ms"
	}
	return num(v) + " s"
}

// scale maps data values onto pixels, linearly or by their logarithm,
// widened to round tick values.
type scale struct {
	lo, hi, p0, p1 float64
	log            bool
}

func newScale(lo, hi float64, log bool, p0, p1 float64) scale {
	if log {
		lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	} else if hi > lo {
		step := niceStep((hi - lo) / 5)
		lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	}
	if hi <= lo {
		hi = lo + 1
	}
	return scale{lo, hi, p0, p1, log}
}

func (s scale) at(v float64) float64 {
	f := (v - s.lo) / (s.hi - s.lo)
	if s.log {
		f = (math.Log10(v) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	}
	return s.p0 + f*(s.p1-s.p0)
}

func (s scale) ticks() []float64 {
	var out []float64
	if s.log {
		for d := s.lo; d <= s.hi*1.0001; d *= 10 {
			out = append(out, d)
		}
		return out
	}
	step := niceStep((s.hi - s.lo) / 5)
	for v := s.lo; v <= s.hi+step/1e6; v += step {
		out = append(out, v)
	}
	return out
}

// niceStep rounds a tick step to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func esc(s string) string { return html.EscapeString(s) }
