package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// scrape gives up on an agent too starved to answer in time: the sums
// then miss it, which a starved cluster makes unavoidable.
var scrape = &http.Client{Timeout: 10 * time.Second}

// counters sums, over every namecast agent, the gossip and memberlist
// counters of its /metrics (counters, and the counts of timers), by name.
func counters(procs []*proc) map[string]float64 {
	sum := map[string]float64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan *proc)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				resp, err := scrape.Get("http://" + addr(p.api) + "/metrics")
				if err != nil {
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				for _, line := range strings.Split(string(b), "\n") {
					if line == "" || line[0] == '#' {
						continue
					}
					f := strings.Fields(line)
					name := f[0]
					if i := strings.IndexByte(name, '{'); i >= 0 {
						name = name[:i]
					}
					if !strings.Contains(name, "memberlist_") && !strings.Contains(name, "antientropy") && !strings.Contains(name, "gossip_") {
						continue
					}
					if strings.HasSuffix(name, "_sum") || strings.Contains(line, "quantile=") {
						continue
					}
					v, _ := strconv.ParseFloat(f[len(f)-1], 64)
					sum[name] += v
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range procs {
		work <- p
	}
	close(work)
	wg.Wait()
	return sum
}

func printDelta(before, after map[string]float64, secs float64) {
	var names []string
	for k := range after {
		if after[k]-before[k] != 0 {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	fmt.Printf("counters over %.0f s, all agents (per second):\n", secs)
	for _, k := range names {
		d := after[k] - before[k]
		fmt.Printf("  %-55s %12.0f  (%.1f/s)\n", k, d, d/secs)
	}
}

// serfCounters makes every serf agent dump its in-memory metrics (the last
// minute, in 10 s intervals) and sums each counter's and timer's count over
// the intervals that ended after since.
var serfLine = regexp.MustCompile(`^\[(.+?)\]\[(C|S)\] '([^']+)': Count: (\d+) .*?Sum: ([0-9.e+-]+)`)

func serfCounters(procs []*proc, since time.Time) {
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGUSR1)
	}
	time.Sleep(3 * time.Second)
	sum := map[string]float64{}
	intervals := map[string]bool{}
	logs, _ := filepath.Glob(filepath.Join(*dir, "*.log"))
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		seen := map[string]bool{}
		for sc.Scan() {
			if !strings.Contains(sc.Text(), "][") {
				continue // not a metrics line
			}
			m := serfLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
			if m == nil {
				continue
			}
			at, err := time.Parse("2006-01-02 15:04:05 -0700 MST", m[1])
			if err != nil || at.Before(since) {
				continue
			}
			key := m[1] + m[3]
			if seen[key] { // dumped twice
				continue
			}
			seen[key] = true
			intervals[m[1]] = true
			// Counters by their sum (bytes for the sent and received
			// ones), as Prometheus shows namecast's; timers by count.
			v, _ := strconv.ParseFloat(m[4], 64)
			if m[2] == "C" {
				v, _ = strconv.ParseFloat(m[5], 64)
			}
			sum[strings.TrimPrefix(m[3], "serf-agent.")] += v
		}
		f.Close()
	}
	secs := 10 * float64(len(intervals))
	printDelta(map[string]float64{}, sum, secs)
}
