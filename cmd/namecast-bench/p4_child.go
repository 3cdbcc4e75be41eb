package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/internal/bench"
	"github.com/namecast/namecast/internal/memlimit"
)

// An agent's own RSS can only be read from a process that runs nothing
// else, so P4 re-runs this binary as a child that starts one agent, joins
// the cluster, waits for the table and reports. The child's settings come
// in the environment, so the same dispatch works for the test binary.
const (
	childEnv   = "NAMECAST_BENCH_CHILD"
	childJoin  = "NAMECAST_BENCH_JOIN"
	childLabel = "NAMECAST_BENCH_LABEL"
	childRef   = "NAMECAST_BENCH_SUMMARY"
	// childProf, when set (by the caller of the bench), is a directory
	// where the child writes join.cpu.prof and join.heap.prof (in-use and
	// allocated space since start): where a sidecar's bytes go.
	childProf = "NAMECAST_BENCH_PROFILE_DIR"
	// childLimit is the child's --memory-limit: it runs one agent in its
	// own process, as the namecast binary does, with the same default.
	childLimit = "NAMECAST_BENCH_MEMORY_LIMIT"
)

type childResult struct {
	SyncSeconds float64 `json:"sync_s"`
	RSS         uint64  `json:"rss"`
	RSSAnon     uint64  `json:"rss_anon"`
	RSSFile     uint64  `json:"rss_file"`
	Heap        uint64  `json:"heap_inuse"`
	PeakRSS     uint64  `json:"peak_rss"`
	HeapSys     uint64  `json:"heap_sys"`
	Released    uint64  `json:"heap_released"`
	TotalAlloc  uint64  `json:"total_alloc"`
	NumGC       uint32  `json:"num_gc"`
	Limit       string  `json:"memory_limit"`
	LimitAtEnd  int64   `json:"memory_limit_at_end"`
	CPUSeconds  float64 `json:"cpu_s"`
	Error       string  `json:"error,omitempty"`
}

// isChild reports whether this process was started as a P4 or P7 child.
func isChild() bool {
	switch os.Getenv(childEnv) {
	case "p4-joiner", "p7-writer", "p7-receiver":
		return true
	}
	return false
}

func joinInChild(ctx context.Context, c *bench.Cluster, ref uint64, limit, gogc string) (childResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return childResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p4SyncTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=p4-joiner", childJoin+"="+c.Running()[0].Agent.GossipAddr(),
		childLabel+"="+c.Label(), childRef+"="+strconv.FormatUint(ref, 10), childLimit+"="+limit)
	if gogc != "" {
		cmd.Env = append(cmd.Env, "GOGC="+gogc)
	}
	out, err := cmd.Output()
	var res childResult
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		return res, fmt.Errorf("child: %v (output %q)", err, out)
	}
	if res.Error != "" {
		return res, fmt.Errorf("child: %s", res.Error)
	}
	return res, nil
}

// runChild is the child's whole life: it prints one JSON childResult.
func runChild(stdout io.Writer) int {
	if role := os.Getenv(childEnv); role == "p7-writer" || role == "p7-receiver" {
		// P7's children report as they go (p7_receiver.go); only a
		// failure is left to say.
		run := p7Child
		if role == "p7-receiver" {
			run = p7Receiver
		}
		if res := run(); res.Error != "" {
			_ = json.NewEncoder(stdout).Encode(res)
			return 1
		}
		return 0
	}
	res := childJoinAndMeasure()
	_ = json.NewEncoder(stdout).Encode(res)
	if res.Error != "" {
		return 1
	}
	return 0
}

func childJoinAndMeasure() childResult {
	ref, err := strconv.ParseUint(os.Getenv(childRef), 10, 64)
	if err != nil {
		return childResult{Error: "bad " + childRef}
	}
	limit, stopLimit, err := memlimit.Apply(os.Getenv(childLimit))
	if err != nil {
		return childResult{Error: err.Error()}
	}
	defer stopLimit()
	cfg := bench.AgentConfig(fmt.Sprintf("child-%d", os.Getpid()), os.Getenv(childLabel), "lan", []string{os.Getenv(childJoin)})
	stopProf := startChildProfiles(os.Getenv(childProf))
	start := time.Now()
	a, err := agent.New(cfg)
	if err != nil {
		return childResult{Error: err.Error()}
	}
	if err := a.Start(context.Background()); err != nil {
		return childResult{Error: err.Error()}
	}
	// Leaving, not crashing, so the cluster drops us at once.
	defer a.Leave(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), p4SyncTimeout)
	defer cancel()
	t := a.Table()
	for {
		idx := t.Index()
		if t.Summary() == ref {
			break
		}
		if t.Wait(ctx, idx); ctx.Err() != nil {
			return childResult{Error: "table not synced within " + p4SyncTimeout.String()}
		}
	}
	res := childResult{SyncSeconds: time.Since(start).Seconds(), Limit: limit, CPUSeconds: bench.CPUTime().Seconds()}
	stopProf()
	res.Heap = bench.HeapInUse()
	res.RSS = bench.ProcessRSS()
	res.PeakRSS = bench.ProcessPeakRSS()
	res.RSSAnon, res.RSSFile = bench.ProcessRSSParts()
	res.LimitAtEnd = debug.SetMemoryLimit(-1)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapSys, res.Released, res.TotalAlloc, res.NumGC = ms.HeapSys, ms.HeapReleased, ms.TotalAlloc, ms.NumGC
	return res
}

// startChildProfiles starts a CPU profile in dir (nothing if dir is
// empty); the returned func stops it and writes the heap profile, once
// the table is synced.
func startChildProfiles(dir string) func() {
	if dir == "" {
		return func() {}
	}
	cpu, err := os.Create(filepath.Join(dir, "join.cpu.prof"))
	if err == nil && pprof.StartCPUProfile(cpu) != nil {
		cpu.Close()
		cpu = nil
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		runtime.GC() // in-use figures are live data
		if f, err := os.Create(filepath.Join(dir, "join.heap.prof")); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
}
