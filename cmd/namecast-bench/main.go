// Command namecast-bench measures namecast against a serf.Serf cluster
// measured in the same run, on one machine, on loopback: propagation (P1),
// withdrawal (P2), query serving (P3), table size (P4) and scale (P5). It
// prints one table per scenario (or JSON with -json) and a PASS/MISS per
// goal, each printed beside its figure (docs/performance.md).
//
//	namecast-bench                      every scenario, full size (~15 min)
//	namecast-bench -short               smoke run, under a minute
//	namecast-bench -scenarios p1 -n 10,50 -trials 30
//	namecast-bench -json > run.json     for comparing runs over time
//	namecast-bench -plot run.json -svg docs/perf   plots of a saved run
//
// Progress goes to stderr; stdout holds only the result.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/namecast/namecast/internal/bench"
)

func main() {
	if isChild() {
		os.Exit(runChild(os.Stdout))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks the running scenario to stop and report what
	// it has; a second one, for a scenario stuck between its checks,
	// kills the process as an unhandled signal does.
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// scenario is one table of the report.
type scenario struct {
	id    string
	title string
	run   func(ctx context.Context, o *options) ([]bench.Figure, error)
}

var scenarios = []scenario{
	{"P1", "propagation: registration on a random agent → readable on every agent (serf: user event → every member)", runP1},
	{"P2", "withdrawal: agent crash / leave → its routes gone on every agent (serf: member failed / left seen by every member)", runP2},
	{"P3", "query: one agent's route for a topic, GET /v1/topics/{topic} over keep-alive HTTP and GET_ROUTEINFO_BY_TOPIC pipelined on its RocketMQ port", runP3},
	{"P4", "size: a new agent syncing a large table; memory; idle anti-entropy traffic", runP4},
	{"P5", "scale: the largest cluster this process sustains", runP5},
	{"P6", "simulated scale: real gossip and routes code vs serf.Serf over an in-memory LAN (0.1-1 ms per link), in virtual time", runP6},
	{"P7", "memory per byte held: one agent's RSS against the records its clients wrote through a door", runP7},
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if o.cpuProf != "" {
		stop, err := startCPUProfile(o.cpuProf)
		if err != nil {
			fmt.Fprintln(stderr, "namecast-bench:", err)
			return 1
		}
		defer stop()
	}
	if len(o.plot) > 0 {
		rep, err := readReports(o.plot)
		if err != nil {
			fmt.Fprintln(stderr, "namecast-bench:", err)
			return 1
		}
		return plot(o.svgDir, rep, stdout, stderr)
	}
	rep := bench.NewReport(args)
	for _, sc := range scenarios {
		if !o.wants(sc.id) {
			continue
		}
		rep.Titles[sc.id] = sc.title
		bench.Progress("%s: %s", sc.id, sc.title)
		start := time.Now()
		figs, err := sc.run(ctx, o)
		rep.Figures = append(rep.Figures, figs...)
		rep.Load[sc.id] = bench.LoadAverage()
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", sc.id, err))
			bench.Progress("%s failed: %v", sc.id, err)
		}
		bench.Progress("%s done in %v", sc.id, time.Since(start).Round(time.Second))
		if ctx.Err() != nil {
			break
		}
	}
	rep.Duration = time.Since(rep.Started).Seconds()
	if o.jsonOut != "" {
		if err := writeJSONFile(o.jsonOut, rep); err != nil {
			fmt.Fprintln(stderr, "namecast-bench:", err)
		}
	}
	if o.json {
		if err := rep.WriteJSON(stdout); err != nil {
			fmt.Fprintln(stderr, "namecast-bench:", err)
			return 1
		}
	} else {
		rep.WriteTables(stdout)
	}
	if o.svgDir != "" && plot(o.svgDir, rep, stderr, stderr) != 0 {
		return 1
	}
	if len(rep.Errors) > 0 {
		return 1
	}
	return 0
}

// plot writes rep's plots to dir and names each file written on w.
func plot(dir string, rep *bench.Report, w, stderr io.Writer) int {
	files, err := writePlots(dir, rep)
	for _, f := range files {
		fmt.Fprintln(w, "wrote", f)
	}
	if err != nil {
		fmt.Fprintln(stderr, "namecast-bench:", err)
		return 1
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "namecast-bench: no figures to plot (P1 needs a report with samples; P2 and P6 need their scenario)")
		return 1
	}
	return 0
}

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func writeJSONFile(path string, rep *bench.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
