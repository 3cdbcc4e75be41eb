// Command realcluster starts N real agent processes on loopback, each its
// own process (namecast agents, or `serf agent` for the peer), each joining
// a random earlier one, waits until every one sees all N alive, times P1
// (a registration, or a Serf user event, on a random member until every
// other has it: namecast through one parked blocking query per agent,
// Serf through an event handler appending the arrival time to a file),
// reads each process's RSS and CPU, and kills them all. Its own module:
// stdlib only, outside the main module's tests (it starts hundreds of
// processes; run it under `flock -x /work/quiet.lock`).
//
//	go build -o /tmp/namecast ./cmd/namecast
//	GOBIN=/tmp/serfbin go install github.com/hashicorp/serf/cmd/serf@v0.11.0
//	cd scripts/realcluster && go run . -sys namecast -n 100 -bin /tmp/namecast
//	go run . -sys serf -n 100 -serf /tmp/serfbin/serf
//
// Ports are fixed from -port up (two per process), below Linux's
// ephemeral range; the work dir (-dir) holds each process's log.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	sys      = flag.String("sys", "namecast", "namecast or serf")
	n        = flag.Int("n", 10, "processes")
	gap      = flag.Duration("gap", 100*time.Millisecond, "start gap")
	trials   = flag.Int("trials", 10, "P1 trials")
	formWait = flag.Duration("form-timeout", 3*time.Minute, "formation timeout")
	bin      = flag.String("bin", "/tmp/namecast", "namecast binary")
	serfBin  = flag.String("serf", "/tmp/serfbin/serf", "serf binary")
	base     = flag.Int("port", 30000, "first port")
	dir      = flag.String("dir", "/tmp/realcluster", "work dir")
	logLevel = flag.String("log-level", "info", "agents' log level (info logs the failure detector's verdicts)")
	hold     = flag.Duration("hold", 60*time.Second, "how long to keep the cluster after P1 (or after formation failed), counting what it does")
	perfFor  = flag.Duration("perf", 0, "if set, `perf record` every CPU this long at the start of the hold")
	extra    = flag.String("args", "", "extra agent flags, space separated")
	register = flag.Bool("register", false, "namecast: each agent registers a URL of its own as soon as it answers, and formation also waits until every agent holds all N")
	perfForm = flag.Duration("perf-form", 0, "if set, `perf record` every CPU this long from the first start (formation)")
)

type proc struct {
	name   string
	gossip int
	api    int // http (namecast) or rpc (serf)
	cmd    *exec.Cmd
}

func main() {
	flag.Parse()
	os.RemoveAll(*dir)
	os.MkdirAll(filepath.Join(*dir, "ev"), 0o755)
	procs := make([]*proc, *n)
	t0 := time.Now()
	var countSince time.Time
	var started []*proc
	var startedMu sync.Mutex
	smp := startSampler(t0, func() []*proc {
		startedMu.Lock()
		defer startedMu.Unlock()
		return started
	})
	// On the way out: Serf's counters, then every process killed, then
	// the logs read (with the processes gone, so it takes seconds, not
	// minutes at a load of 500).
	defer func() {
		if *sys == "serf" && !countSince.IsZero() {
			serfCounters(procs, countSince)
		}
		smp.Stop()
		for _, p := range procs {
			if p != nil && p.cmd.Process != nil {
				p.cmd.Process.Kill()
				p.cmd.Wait()
			}
		}
		timeline(t0, smp)
	}()
	if *perfForm > 0 {
		perfDone := make(chan struct{})
		go func() {
			defer close(perfDone)
			perfRecord("perf-form.data", *perfForm)
		}()
		defer func() { <-perfDone }()
	}
	for i := range procs {
		p := &proc{name: fmt.Sprintf("%s%03d", (*sys)[:1], i), gossip: *base + 2*i, api: *base + 2*i + 1}
		var args []string
		if *sys == "namecast" {
			args = []string{"agent", "--node", p.name, "--bind", addr(p.gossip), "--http", addr(p.api), "--rocketmq", "off", "--zookeeper", "off", "--nacos", "off", "--consul", "off", "--dns", "off", "--profile", "lan", "--log-level", *logLevel}
			if i > 0 {
				args = append(args, "--join", addr(procs[rand.IntN(i)].gossip))
			}
			args = append(args, strings.Fields(*extra)...)
			p.cmd = exec.Command(*bin, args...)
		} else {
			args = []string{"agent", "-node", p.name, "-bind", addr(p.gossip), "-rpc-addr", addr(p.api), "-profile", "lan", "-log-level", *logLevel,
				"-event-handler", "user:p1=" + filepath.Join(*dir, "h.sh")}
			if i > 0 {
				args = append(args, "-join", addr(procs[rand.IntN(i)].gossip))
			}
			p.cmd = exec.Command(*serfBin, args...)
		}
		logf, _ := os.Create(filepath.Join(*dir, p.name+".log"))
		p.cmd.Stdout, p.cmd.Stderr = logf, logf
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := p.cmd.Start(); err != nil {
			fmt.Println("start:", err)
			return
		}
		procs[i] = p
		if *register && *sys == "namecast" {
			go registerOwn(p, i)
		}
		startedMu.Lock()
		started = append(started, p)
		startedMu.Unlock()
		time.Sleep(*gap)
	}
	if *sys == "serf" {
		os.WriteFile(filepath.Join(*dir, "h.sh"), []byte("#!/bin/sh\necho \"$(date +%s%N)\" >> "+filepath.Join(*dir, "ev")+"/$SERF_SELF_NAME-$(cat)\n"), 0o755)
	}
	fmt.Printf("%s N=%d started in %.1fs (gap %v), load %s\n", *sys, *n, time.Since(t0).Seconds(), *gap, load())
	countSince = time.Now()
	// Formation.
	for i := 0; i < len(procs); {
		if time.Since(t0) > *formWait {
			fmt.Printf("NOT FORMED after %v: %s sees %d of %d; load %s\n", *formWait, procs[i].name, alive(procs[i]), *n, load())
			formCost(procs)
			holdOn(procs)
			usage(procs)
			return
		}
		if alive(procs[i]) == *n && (!*register || holding(procs[i]) == *n) {
			i++
			continue
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Printf("formed: every member sees %d alive, %.1fs after the first start; load %s\n", *n, time.Since(t0).Seconds(), load())
	if *register {
		fmt.Printf("  (and holds every member's own registration)\n")
	}
	formCost(procs)
	time.Sleep(5 * time.Second)
	var lasts []float64
	missed := 0
	for t := range *trials {
		src := rand.IntN(*n)
		key := fmt.Sprintf("svc%d", t)
		last, miss := trial(procs, src, key)
		lasts = append(lasts, last)
		missed += miss
		time.Sleep(time.Duration(300+rand.IntN(500)) * time.Millisecond)
	}
	sort.Float64s(lasts)
	fmt.Printf("last member has it (%d trials): p50 %.0f ms, p99/max %.0f ms, missed deliveries %d; load %s\n",
		len(lasts), 1000*lasts[len(lasts)/2], 1000*lasts[len(lasts)-1], missed, load())
	holdOn(procs)
	usage(procs)
}

// holdOn keeps the cluster for -hold, recording perf at its start if asked,
// and prints what namecast's agents counted meanwhile (Serf's are dumped
// on the way out).
func holdOn(procs []*proc) {
	start := time.Now()
	var before map[string]float64
	if *sys == "namecast" {
		before = counters(procs)
	}
	fmt.Printf("holding %v from %s; load %s\n", *hold, start.Format("15:04:05"), load())
	if *perfFor > 0 {
		perfRecord("perf.data", *perfFor)
	}
	time.Sleep(time.Until(start.Add(*hold)))
	if *sys == "namecast" {
		t := time.Now()
		after := counters(procs)
		printDelta(before, after, time.Since(start).Seconds()-time.Since(t).Seconds()/2)
	}
	fmt.Printf("hold over; load %s\n", load())
}

// perfRecord samples every CPU, with call graphs, for d into dir/file.
func perfRecord(file string, d time.Duration) {
	out, err := exec.Command("perf", "record", "-F", "99", "-a", "-g", "-o", filepath.Join(*dir, file), "--", "sleep", strconv.Itoa(int(d.Seconds()))).CombinedOutput()
	if err != nil {
		fmt.Println("perf:", err, string(out))
	}
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func load() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

var client = &http.Client{Timeout: 40 * time.Second}

func alive(p *proc) int {
	if *sys == "namecast" {
		resp, err := client.Get("http://" + addr(p.api) + "/v1/members")
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		var ms []struct {
			Status string `json:"status"`
		}
		if json.NewDecoder(resp.Body).Decode(&ms) != nil {
			return 0
		}
		c := 0
		for _, m := range ms {
			if m.Status == "alive" {
				c++
			}
		}
		return c
	}
	out, err := exec.Command(*serfBin, "members", "-status", "alive", "-rpc-addr", addr(p.api)).Output()
	if err != nil {
		return 0
	}
	return bytes.Count(out, []byte("\n"))
}

// trial times one registration (serf: user event) from src to all others.
func trial(procs []*proc, src int, key string) (float64, int) {
	var mu sync.Mutex
	var last time.Duration
	missed := 0
	var wg sync.WaitGroup
	var start time.Time
	ready := make(chan struct{})
	if *sys == "namecast" {
		for i, p := range procs {
			if i == src {
				continue
			}
			// The view's index before the change, then a blocking query.
			idx := index(p, key)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ready
				deadline := start.Add(30 * time.Second)
				for time.Now().Before(deadline) {
					resp, err := client.Get(fmt.Sprintf("http://%s/v1/services/%s?index=%d&wait=30s", addr(p.api), key, idx))
					if err != nil {
						time.Sleep(10 * time.Millisecond)
						continue
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if h := resp.Header.Get("X-Namecast-Index"); h != "" {
						idx, _ = strconv.ParseUint(h, 10, 64)
					}
					if bytes.Contains(b, []byte("dubbo://")) {
						d := time.Since(start)
						mu.Lock()
						last = max(last, d)
						mu.Unlock()
						return
					}
				}
				mu.Lock()
				missed++
				last = max(last, 30*time.Second)
				mu.Unlock()
			}()
		}
		time.Sleep(200 * time.Millisecond) // queries parked
		start = time.Now()
		close(ready)
		if code, err := putURL(procs[src], fmt.Sprintf("dubbo://127.0.0.1:20880/%s?side=provider", key)); code != 200 {
			fmt.Println("register failed:", code, err)
		}
		wg.Wait()
		return last.Seconds(), missed
	}
	start = time.Now()
	if out, err := exec.Command(*serfBin, "event", "-coalesce=false", "-rpc-addr", addr(procs[src].api), "p1", key).CombinedOutput(); err != nil {
		fmt.Println("serf event:", err, string(out))
	}
	deadline := start.Add(30 * time.Second)
	for {
		got, lastAt := 0, int64(0)
		for i, p := range procs {
			if i == src {
				continue
			}
			b, err := os.ReadFile(filepath.Join(*dir, "ev", p.name+"-"+key))
			if err != nil {
				continue
			}
			ns, _ := strconv.ParseInt(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), 10, 64)
			got++
			lastAt = max(lastAt, ns)
		}
		if got == len(procs)-1 {
			return time.Unix(0, lastAt).Sub(start).Seconds(), 0
		}
		if time.Now().After(deadline) {
			return 30, len(procs) - 1 - got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func index(p *proc, key string) uint64 {
	resp, err := client.Get("http://" + addr(p.api) + "/v1/services/" + key)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	v, _ := strconv.ParseUint(resp.Header.Get("X-Namecast-Index"), 10, 64)
	return v
}

// usage prints RSS and CPU per process, p50/max.
func usage(procs []*proc) {
	var rss, cpu []float64
	for _, p := range procs {
		if p.cmd.Process == nil {
			continue
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
		if err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "VmRSS:") {
					kb, _ := strconv.ParseFloat(strings.Fields(sc.Text())[1], 64)
					rss = append(rss, kb/1024)
				}
			}
			f.Close()
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)); err == nil {
			fs := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
			ut, _ := strconv.ParseFloat(fs[11], 64)
			st, _ := strconv.ParseFloat(fs[12], 64)
			cpu = append(cpu, (ut+st)/100)
		}
	}
	sort.Float64s(rss)
	sort.Float64s(cpu)
	if len(rss) > 0 && len(cpu) > 0 {
		fmt.Printf("per process: RSS p50 %.1f MB max %.1f MB; CPU since start p50 %.2fs max %.2fs\n", rss[len(rss)/2], rss[len(rss)-1], cpu[len(cpu)/2], cpu[len(cpu)-1])
	}
}

// registerOwn registers the i-th agent's own URL (interface "boot") as
// soon as its HTTP API answers, as a broker beside it would.
func registerOwn(p *proc, i int) {
	url := fmt.Sprintf("dubbo://127.0.0.1:%d/boot?side=provider", 20000+i)
	for end := time.Now().Add(*formWait); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if code, _ := putURL(p, url); code == 200 {
			return
		}
	}
	fmt.Println("register failed:", p.name)
}

// holding is how many agents' own registrations p holds.
func holding(p *proc) int {
	resp, err := client.Get("http://" + addr(p.api) + "/v1/services/boot")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return bytes.Count(b, []byte("dubbo://"))
}

// putURL registers url on p's agent and returns the HTTP status.
func putURL(p *proc, url string) (int, error) {
	body := fmt.Sprintf(`{"url":%q}`, url)
	req, _ := http.NewRequest("PUT", "http://"+addr(p.api)+"/v1/urls", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
