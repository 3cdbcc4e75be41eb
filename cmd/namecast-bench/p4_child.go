package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/internal/bench"
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
)

type childResult struct {
	SyncSeconds float64 `json:"sync_s"`
	RSS         uint64  `json:"rss"`
	Heap        uint64  `json:"heap_inuse"`
	Error       string  `json:"error,omitempty"`
}

// isChild reports whether this process was started as a P4 child.
func isChild() bool { return os.Getenv(childEnv) == "p4-joiner" }

func joinInChild(ctx context.Context, c *bench.Cluster, ref uint64) (childResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return childResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p4SyncTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=p4-joiner", childJoin+"="+c.Running()[0].Agent.GossipAddr(),
		childLabel+"="+c.Label(), childRef+"="+strconv.FormatUint(ref, 10))
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
	cfg := bench.AgentConfig(fmt.Sprintf("child-%d", os.Getpid()), os.Getenv(childLabel), "lan", []string{os.Getenv(childJoin)})
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
	res := childResult{SyncSeconds: time.Since(start).Seconds()}
	res.Heap = bench.HeapInUse()
	res.RSS = bench.ProcessRSS()
	return res
}
