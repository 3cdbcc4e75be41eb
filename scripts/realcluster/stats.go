package main

// What an overloaded cluster spends its time on, for both systems alike:
// per 10 s, the CPU all agent processes used (cores), the load, and the
// failure detector's verdicts counted from the agents' own logs (memberlist
// logs the same lines in both): suspicions started, deaths declared,
// refutations. namecast's counters (/metrics) and Serf's (its in-memory
// sink, dumped on SIGUSR1) add what each did over the network.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sample is the cluster's CPU and load at one moment.
type sample struct {
	at    time.Duration // since t0
	ticks float64       // utime+stime of every agent process, clock ticks
	load  float64
	procs int
}

type sampler struct {
	mu      sync.Mutex
	samples []sample
	stop    chan struct{}
	done    chan struct{}
}

// startSampler records the agents' CPU and the load every second.
func startSampler(t0 time.Time, procs func() []*proc) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			var sm sample
			sm.at = time.Since(t0)
			for _, p := range procs() {
				if p == nil || p.cmd.Process == nil {
					continue
				}
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
				if err != nil {
					continue
				}
				fs := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
				ut, _ := strconv.ParseFloat(fs[11], 64)
				st, _ := strconv.ParseFloat(fs[12], 64)
				sm.ticks += ut + st
				sm.procs++
			}
			sm.load, _ = strconv.ParseFloat(strings.Fields(load())[0], 64)
			s.mu.Lock()
			s.samples = append(s.samples, sm)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) Stop() { close(s.stop); <-s.done }

// The failure detector's lines, as memberlist logs them in both systems.
var verdicts = []struct {
	name string
	re   *regexp.Regexp
}{
	{"suspect", regexp.MustCompile(`Suspect \S+ has failed, no acks received`)},
	{"dead", regexp.MustCompile(`Marking \S+ as failed, suspect timeout reached`)},
	{"refute", regexp.MustCompile(`Refuting a (suspect|dead) message`)},
	{"tcpfallback", regexp.MustCompile(`over TCP but UDP probes failed`)},
	{"reconnect", regexp.MustCompile(`reconnected to failed member|serf: attempting reconnect`)},
}

var (
	slogTime = regexp.MustCompile(`time=(\S+)`)
	stdTime  = regexp.MustCompile(`(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d)`)
)

// timeline prints, per 10 s since t0, the cores the agents used, the load
// and the verdicts counted in every agent's log.
func timeline(t0 time.Time, s *sampler) {
	const bucket = 10 * time.Second
	counts := map[int]map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(*dir, "*.log"))
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, "memberlist") && !strings.Contains(line, "reconnect") {
				continue
			}
			for _, v := range verdicts {
				if !v.re.MatchString(line) {
					continue
				}
				var at time.Time
				if m := slogTime.FindStringSubmatch(line); m != nil {
					at, _ = time.Parse(time.RFC3339Nano, m[1])
				} else if m := stdTime.FindStringSubmatch(line); m != nil {
					at, _ = time.ParseInLocation("2006/01/02 15:04:05", m[1], time.Local)
				}
				b := int(at.Sub(t0) / bucket)
				if counts[b] == nil {
					counts[b] = map[string]int{}
				}
				counts[b][v.name]++
			}
		}
		f.Close()
	}
	s.mu.Lock()
	samples := append([]sample(nil), s.samples...)
	s.mu.Unlock()
	fmt.Printf("%6s %5s %6s %5s %8s %8s %8s %8s %9s\n", "t(s)", "procs", "cores", "load", "suspect", "dead", "refute", "tcp-fb", "reconnect")
	tot := map[string]int{}
	for b := 0; b*int(bucket) <= int(samples[len(samples)-1].at); b++ {
		var first, last *sample
		for i := range samples {
			if int(samples[i].at/bucket) == b {
				if first == nil {
					first = &samples[i]
				}
				last = &samples[i]
			}
		}
		if first == nil {
			continue
		}
		// Cores over the bucket: from the previous bucket's last sample.
		i := sort.Search(len(samples), func(i int) bool { return samples[i].at >= first.at })
		prev := first
		if i > 0 {
			prev = &samples[i-1]
		}
		cores := 0.0
		if dt := (last.at - prev.at).Seconds(); dt > 0 && last.procs == prev.procs {
			cores = (last.ticks - prev.ticks) / 100 / dt
		}
		c := counts[b]
		for k, v := range c {
			tot[k] += v
		}
		fmt.Printf("%6d %5d %6.2f %5.0f %8d %8d %8d %8d %9d\n", b*10, last.procs, cores, last.load, c["suspect"], c["dead"], c["refute"], c["tcpfallback"], c["reconnect"])
	}
	fmt.Printf("total: suspect %d, dead %d, refute %d, tcp-fallback %d, reconnect %d\n", tot["suspect"], tot["dead"], tot["refute"], tot["tcpfallback"], tot["reconnect"])
}

// cpuSeconds is a process's user+system CPU so far, in seconds (false if
// it is gone).
func cpuSeconds(p *proc) (float64, bool) {
	if p == nil || p.cmd.Process == nil {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	fs := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	ut, _ := strconv.ParseFloat(fs[11], 64)
	st, _ := strconv.ParseFloat(fs[12], 64)
	return (ut + st) / 100, true
}

// formCost prints what formation cost, read the moment it ended (or was
// given up): CPU per process so far, and for namecast the counters its
// agents kept since they started, summed and per agent. Read at the end
// of a run instead, CPU "since start" also counts P1 and the hold, so a
// cluster that formed slower looked costlier per process.
func formCost(procs []*proc) {
	var cpu []float64
	for _, p := range procs {
		if c, ok := cpuSeconds(p); ok {
			cpu = append(cpu, c)
		}
	}
	sort.Float64s(cpu)
	total := 0.0
	for _, c := range cpu {
		total += c
	}
	if len(cpu) > 0 {
		fmt.Printf("CPU to form, per process: p50 %.2fs max %.2fs; all %d processes %.1f CPU-s\n", cpu[len(cpu)/2], cpu[len(cpu)-1], len(cpu), total)
	}
	if *sys == "namecast" {
		sum := counters(procs)
		var names []string
		for k, v := range sum {
			if v != 0 {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		fmt.Printf("counters at formation, all agents (per agent):\n")
		for _, k := range names {
			fmt.Printf("  %-55s %12.0f  (%.1f)\n", k, sum[k], sum[k]/float64(len(procs)))
		}
	}
}
