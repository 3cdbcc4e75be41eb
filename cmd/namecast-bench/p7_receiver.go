package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/internal/bench"
	"github.com/namecast/namecast/internal/memlimit"
)

// P7's two processes talk over their standard streams, a JSON line at a
// time: the receiver says where to join, the writer reports what it holds,
// the parent tells the receiver how many records to wait for, the receiver
// reports, and closing their standard inputs ends both.

// p7Hello is the receiver's first line.
type p7Hello struct {
	Join  string `json:"join"`
	Error string `json:"error,omitempty"`
}

// p7Pair runs a receiver and a writer joined to it, and returns what
// each holds and costs.
func p7Pair(ctx context.Context, spec string) (writer, receiver p7Result, err error) {
	exe, err := os.Executable()
	if err != nil {
		return writer, receiver, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	start := func(role string, env ...string) (*exec.Cmd, io.WriteCloser, *json.Decoder, error) {
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(append(os.Environ(), childEnv+"="+role, p7Env+"="+spec), env...)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, nil, nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, nil, err
		}
		return cmd, in, json.NewDecoder(out), nil
	}
	rcmd, rin, rout, err := start("p7-receiver")
	if err != nil {
		return writer, receiver, err
	}
	defer func() { rin.Close(); _ = rcmd.Wait() }()
	var hello p7Hello
	if err := rout.Decode(&hello); err != nil || hello.Error != "" {
		return writer, receiver, fmt.Errorf("receiver: %v %s", err, hello.Error)
	}
	wcmd, win, wout, err := start("p7-writer", p7JoinEnv+"="+hello.Join)
	if err != nil {
		return writer, receiver, err
	}
	defer func() { win.Close(); _ = wcmd.Wait() }()
	if err := wout.Decode(&writer); err != nil || writer.Error != "" {
		return writer, receiver, fmt.Errorf("writer: %v %s", err, writer.Error)
	}
	if _, err := fmt.Fprintf(rin, "%d\n", writer.Records); err != nil {
		return writer, receiver, err
	}
	if err := rout.Decode(&receiver); err != nil || receiver.Error != "" {
		return writer, receiver, fmt.Errorf("receiver: %v %s", err, receiver.Error)
	}
	return writer, receiver, nil
}

// p7Report writes one JSON line to the parent.
func p7Report(v any) { _ = json.NewEncoder(os.Stdout).Encode(v) }

// p7Receiver runs the receiving agent: every door on and a data dir, as
// the binary runs, holding what the writer's agent gossips to it.
func p7Receiver() p7Result {
	_, stopLimit, err := memlimit.Apply("")
	if err != nil {
		return p7Result{Error: err.Error()}
	}
	defer stopLimit()
	dir, err := os.MkdirTemp("", "namecast-p7r-")
	if err != nil {
		return p7Result{Error: err.Error()}
	}
	defer os.RemoveAll(dir)
	cfg := bench.AgentConfig(fmt.Sprintf("p7r-%d", os.Getpid()), "p7", "lan", nil)
	p7Doors(&cfg)
	cfg.DataDir = dir
	cfg.ConsulAddr = "127.0.0.1:0"
	a, err := agent.New(cfg)
	if err != nil {
		return p7Result{Error: err.Error()}
	}
	if err := a.Start(context.Background()); err != nil {
		return p7Result{Error: err.Error()}
	}
	defer a.Shutdown()
	p7Report(p7Hello{Join: a.GossipAddr()})
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		return p7Result{Error: "no count from the parent: " + err.Error()}
	}
	want, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return p7Result{Error: "bad count " + line}
	}
	start := time.Now()
	received := func() (recs int, bytes int64) {
		t := a.Table()
		for _, o := range t.Origins() {
			if o != t.Local() {
				u := t.Usage(o)
				recs, bytes = recs+u.Records, bytes+u.Bytes
			}
		}
		return recs, bytes
	}
	for {
		if n, _ := received(); n >= want {
			break
		}
		if time.Since(start) > 10*time.Minute {
			n, _ := received()
			return p7Result{Error: fmt.Sprintf("received %d of %d records in 10 min", n, want)}
		}
		time.Sleep(100 * time.Millisecond)
	}
	res := p7Result{WriteSecs: time.Since(start).Seconds()}
	runtime.GC()
	time.Sleep(2 * time.Second)
	runtime.GC()
	time.Sleep(time.Second)
	res.Records, res.Bytes = received()
	res.RSS = bench.ProcessRSS()
	res.Heap = bench.HeapInUse()
	p7Report(res)
	_, _ = io.Copy(io.Discard, in)
	return res
}

// p7Doors turns on, on free ports, every door the binary runs by default,
// as an agent beside processes runs them.
func p7Doors(cfg *agent.Config) {
	def := agent.DefaultConfig()
	on := map[string]bool{}
	for _, d := range def.Doors() {
		on[d.Name] = *d.Addr != "off"
	}
	for _, d := range cfg.Doors() {
		if on[d.Name] {
			*d.Addr = "127.0.0.1:0"
		}
	}
}
