package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// options are the command's flags; -short replaces the sizes with a smoke
// run's before the explicitly given flags are applied again.
type options struct {
	short     bool
	json      bool
	jsonOut   string
	cpuProf   string
	svgDir    string   // -svg: write plots here
	plot      []string // -plot: saved reports to plot instead of running
	scenarios map[string]bool

	p1N      []int
	p1Trials int

	p2N       []int
	p2Trials  int
	profiles  []string
	p2IdleFor time.Duration

	p3Clients []int
	p3For     time.Duration
	p3Client  string
	p3Conns   []int // RocketMQ port: connections
	p3Windows []int // RocketMQ port: requests in flight per connection

	p4Agents, p4Brokers, p4Topics int
	p4Trials                      int
	p4IdleN                       int
	p4IdleFor                     time.Duration
	p4MemoryLimit                 string
	p4GOGC                        string
	p7Records, p7Znodes, p7Size   int

	p5N      []int
	p5Trials int

	p6N        []int
	p6Profiles []string
	p6Trials   int
	p6Crashes  int
	p6Loss     float64
	p6IdleFor  time.Duration
	p6GOGC     int
	p6Systems  []string
	p6Results  string
}

func defaults() *options {
	return &options{
		p1N: []int{10, 50, 100}, p1Trials: 20,
		p2N: []int{10, 50}, p2Trials: 8, profiles: []string{"lan", "fast"}, p2IdleFor: 10 * time.Second,
		p3Clients: []int{1, 4, 16, 64}, p3For: 5 * time.Second, p3Client: "lean", p3Conns: []int{1, 4}, p3Windows: []int{1, 16},
		p4Agents: 10, p4Brokers: 100, p4Topics: 1000, p4Trials: 3, p4IdleN: 50, p4IdleFor: 30 * time.Second,
		p7Records: 4000, p7Znodes: 1000, p7Size: 8000,
		p5N: []int{100, 150, 200}, p5Trials: 10,
		p6N: []int{1000, 2000}, p6Profiles: []string{"lan"}, p6Trials: 10, p6Crashes: 10, p6GOGC: 400, p6Systems: []string{"namecast", "serf"},
	}
}

// shortSizes is the smoke run: every scenario, small and quick.
func shortSizes(o *options) {
	o.p1N, o.p1Trials = []int{5}, 5
	o.p2N, o.p2Trials, o.profiles, o.p2IdleFor = []int{5}, 1, []string{"fast"}, 2*time.Second
	o.p3Clients, o.p3For, o.p3Conns, o.p3Windows = []int{4}, time.Second, []int{1}, []int{16}
	o.p4Agents, o.p4Brokers, o.p4Topics, o.p4Trials, o.p4IdleN, o.p4IdleFor = 2, 4, 100, 1, 4, 2*time.Second
	o.p7Records, o.p7Znodes = 200, 100
	o.p5N, o.p5Trials = []int{10}, 2
	o.p6N, o.p6Trials, o.p6Crashes, o.p6IdleFor = []int{20}, 3, 1, 10*time.Second
}

func (o *options) wants(id string) bool { return o.scenarios[strings.ToLower(id)] }

// parseFlags parses args onto the defaults, or, with -short, onto the
// smoke sizes: it parses twice so that flags given with -short still win.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o, err := parseOnto(defaults(), args, io.Discard)
	if err == nil && o.short {
		s := defaults()
		shortSizes(s)
		o, err = parseOnto(s, args, stderr)
	} else {
		o, err = parseOnto(defaults(), args, stderr)
	}
	return o, err
}

func parseOnto(o *options, args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("namecast-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scen := "p1,p2,p3,p4,p5,p6,p7"
	fs.BoolVar(&o.short, "short", false, "smoke run: small clusters, few trials (under a minute); other flags still apply")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON instead of tables")
	fs.StringVar(&o.jsonOut, "json-out", "", "also write the JSON report to this file")
	fs.StringVar(&o.cpuProf, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.StringVar(&scen, "scenarios", scen, "scenarios to run")
	fs.StringVar(&o.svgDir, "svg", "", "write SVG plots of the results (P1 delivery CDF, P2 withdrawal, P6 cost against N) to this `dir`")
	fs.Func("plot", "with -svg: plot these saved JSON reports (comma-separated) instead of running anything", func(s string) error {
		o.plot = strings.Split(s, ",")
		return nil
	})
	fs.Func("n", "P1 cluster sizes "+ints(o.p1N), intList(&o.p1N))
	fs.IntVar(&o.p1Trials, "trials", o.p1Trials, "P1 trials per size and system")
	fs.Func("p2-n", "P2 cluster sizes "+ints(o.p2N), intList(&o.p2N))
	fs.IntVar(&o.p2Trials, "p2-trials", o.p2Trials, "P2 crash and leave trials per size, profile and system")
	fs.Func("profiles", "P2 gossip profiles ("+strings.Join(o.profiles, ",")+")", func(s string) error { o.profiles = strings.Split(s, ","); return nil })
	fs.DurationVar(&o.p2IdleFor, "p2-idle", o.p2IdleFor, "P2 window for idle traffic")
	fs.Func("p3-clients", "P3 concurrent clients "+ints(o.p3Clients), intList(&o.p3Clients))
	fs.DurationVar(&o.p3For, "p3-duration", o.p3For, "P3 run per client count")
	fs.Func("p3-windows", "P3 RocketMQ port: requests in flight per connection "+ints(o.p3Windows), intList(&o.p3Windows))
	fs.Func("p3-conns", "P3 RocketMQ port: connections "+ints(o.p3Conns), intList(&o.p3Conns))
	fs.StringVar(&o.p3Client, "p3-client", o.p3Client, "P3 load client: lean (raw keep-alive) or std (net/http.Client)")
	fs.IntVar(&o.p4Agents, "p4-agents", o.p4Agents, "P4 agents holding the brokers")
	fs.IntVar(&o.p4Brokers, "p4-brokers", o.p4Brokers, "P4 brokers (each on one agent)")
	fs.IntVar(&o.p4Topics, "p4-topics", o.p4Topics, "P4 topics on every broker")
	fs.IntVar(&o.p4Trials, "p4-trials", o.p4Trials, "P4 joins timed")
	fs.IntVar(&o.p4IdleN, "p4-idle-n", o.p4IdleN, "P4 cluster size for idle traffic (0 skips)")
	fs.DurationVar(&o.p4IdleFor, "p4-idle", o.p4IdleFor, "P4 window for idle traffic")
	fs.StringVar(&o.p4GOGC, "p4-gogc", "", "P4 joiner process's GOGC (empty: the namecast binary's default)")
	fs.IntVar(&o.p7Records, "p7-records", o.p7Records, "P7 Dubbo URLs registered through one agent's HTTP door")
	fs.IntVar(&o.p7Znodes, "p7-znodes", o.p7Znodes, "P7 ephemeral znodes created through one agent's ZooKeeper door, 50 to a session")
	fs.IntVar(&o.p7Size, "p7-size", o.p7Size, "P7 bytes of each record (a URL's length, a znode's data)")
	fs.StringVar(&o.p4MemoryLimit, "p4-memory-limit", "", "P4 joiner process's --memory-limit: auto, off or a size (empty: the namecast binary's default)")
	fs.Func("p5-n", "P5 cluster sizes to try, ascending "+ints(o.p5N), intList(&o.p5N))
	fs.IntVar(&o.p5Trials, "p5-trials", o.p5Trials, "P5 propagation trials per size and system")
	fs.Func("p6-n", "P6 simulated sizes "+ints(o.p6N), intList(&o.p6N))
	fs.Func("p6-profiles", "P6 gossip profiles ("+strings.Join(o.p6Profiles, ",")+")", func(s string) error { o.p6Profiles = strings.Split(s, ","); return nil })
	fs.IntVar(&o.p6Trials, "p6-trials", o.p6Trials, "P6 registrations timed per size and system")
	fs.IntVar(&o.p6Crashes, "p6-crashes", o.p6Crashes, "P6 crashes timed per size and system")
	fs.Float64Var(&o.p6Loss, "p6-loss", o.p6Loss, "P6 packet loss on every link (0-1)")
	fs.DurationVar(&o.p6IdleFor, "p6-idle", o.p6IdleFor, "P6 virtual window for idle traffic and CPU; 0: one push/pull round at that size (180s at N=1000), so every member's push/pull is counted once")
	fs.IntVar(&o.p6GOGC, "p6-gogc", o.p6GOGC, "P6 garbage collector target (GOGC) while simulating; memory for CPU")
	fs.StringVar(&o.p6Results, "p6-results", "", "P6: save each system's raw result in this directory, and read one saved there instead of simulating it (two -p6-systems halves run at once, then a run with both judges them)")
	fs.Func("p6-systems", "P6 systems to simulate ("+strings.Join(o.p6Systems, ",")+"): one alone runs a size's two halves in two processes at once; its figures leave the other's side empty", func(s string) error {
		for _, sys := range strings.Split(s, ",") {
			if sys != "namecast" && sys != "serf" {
				return fmt.Errorf("unknown system %q: namecast or serf", sys)
			}
		}
		o.p6Systems = strings.Split(s, ",")
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "namecast-bench: unexpected argument %q\n", fs.Arg(0))
		return nil, fmt.Errorf("unexpected arguments")
	}
	if len(o.plot) > 0 && o.svgDir == "" {
		fmt.Fprintln(stderr, "namecast-bench: -plot needs -svg DIR: where to write the plots")
		return nil, fmt.Errorf("-plot without -svg")
	}
	if o.p3Client != "lean" && o.p3Client != "std" {
		fmt.Fprintf(stderr, "namecast-bench: -p3-client %q: use lean or std\n", o.p3Client)
		return nil, fmt.Errorf("bad -p3-client")
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
		zero bool // 0 means the default
	}{{"-p2-idle", o.p2IdleFor, false}, {"-p4-idle", o.p4IdleFor, false}, {"-p6-idle", o.p6IdleFor, true}} {
		if d.v < 0 || d.v == 0 && !d.zero {
			fmt.Fprintf(stderr, "namecast-bench: %s %v: the window must be positive, like 30s\n", d.flag, d.v)
			return nil, fmt.Errorf("bad %s", d.flag)
		}
	}
	// Made now, not when the first result is saved: a size's half runs
	// for most of an hour before it saves.
	if o.p6Results != "" {
		if err := os.MkdirAll(o.p6Results, 0o755); err != nil {
			fmt.Fprintf(stderr, "namecast-bench: -p6-results: %v\n", err)
			return nil, err
		}
	}
	o.scenarios = map[string]bool{}
	for _, s := range strings.Split(scen, ",") {
		o.scenarios[strings.ToLower(strings.TrimSpace(s))] = true
	}
	return o, nil
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return "(" + strings.Join(s, ",") + ")"
}

func intList(dst *[]int) func(string) error {
	return func(s string) error {
		var out []int
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive number", f)
			}
			out = append(out, n)
		}
		*dst = out
		return nil
	}
}
