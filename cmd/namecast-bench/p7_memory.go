package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/bench"
	"github.com/namecast/namecast/internal/memlimit"
)

// P7, beside P4: what an agent's memory costs per byte of records it
// holds. A child process runs one agent as the namecast binary does
// (every door on, a data dir, the default memory limit), its clients write
// N records of S bytes through a door (Dubbo URLs over HTTP with a TTL, or
// ZooKeeper ephemeral znodes of S bytes of data), and it reports its RSS
// against the bytes it holds (routes.RecordSize, summed). A second agent,
// in a process of its own, joins it and reports the same of the copies it
// receives. Issue 34's goal, for both: RSS ≤ 3 × the bytes held + 30 MB.
const (
	p7Env     = "NAMECAST_BENCH_P7"      // kind:count:size
	p7JoinEnv = "NAMECAST_BENCH_P7_JOIN" // the receiver's gossip address, for the writer
)

type p7Result struct {
	Records   int     `json:"records"`
	Bytes     int64   `json:"bytes"`
	RSS       uint64  `json:"rss"`
	Heap      uint64  `json:"heap_inuse"`
	WriteSecs float64 `json:"write_s"`
	Error     string  `json:"error,omitempty"`
}

func runP7(ctx context.Context, o *options) ([]bench.Figure, error) {
	var figs []bench.Figure
	for _, kind := range []string{"urls", "znodes"} {
		n := o.p7Records
		if kind == "znodes" {
			n = o.p7Znodes
		}
		bench.Progress("  %d %s of %d bytes through one agent's door, received by a second agent", n, kind, o.p7Size)
		w, r, err := p7Pair(ctx, fmt.Sprintf("%s:%d:%d", kind, n, o.p7Size))
		if err != nil {
			return figs, err
		}
		caseName := fmt.Sprintf("%d %s × %d B", n, kind, o.p7Size)
		figs = append(figs, p7Figure(caseName, "writer RSS, own process", w), p7Figure(caseName, "receiver RSS, own process", r))
	}
	return figs, nil
}

// p7Figure judges one process's RSS against the records it holds.
func p7Figure(caseName, metric string, res p7Result) bench.Figure {
	held := bench.MB(uint64(res.Bytes))
	rss := bench.MB(res.RSS)
	goal := 3*held + 30
	f := bench.Figure{Scenario: "P7", Case: caseName, Metric: metric, Unit: bench.UnitMB,
		Namecast: bench.Summarize([]float64{rss})}
	f = f.Judge(fmt.Sprintf("≤ 3 × %.1f + 30 = %.0f MB", held, goal), rss <= goal)
	f.Note = fmt.Sprintf("%d records, %.1f MB held (%.2f× RSS per byte); heap in use %.1f MB; written or received in %.1fs",
		res.Records, held, rss/held, bench.MB(res.Heap), res.WriteSecs)
	bench.Progress("  %s: RSS %.1f MB for %.1f MB held (heap %.1f MB)", metric, rss, held, bench.MB(res.Heap))
	return f
}

// p7Child runs the writer: one agent, its clients, its figures.
func p7Child() p7Result {
	parts := strings.Split(os.Getenv(p7Env), ":")
	if len(parts) != 3 {
		return p7Result{Error: "bad " + p7Env}
	}
	n, _ := strconv.Atoi(parts[1])
	size, _ := strconv.Atoi(parts[2])
	_, stopLimit, err := memlimit.Apply("")
	if err != nil {
		return p7Result{Error: err.Error()}
	}
	defer stopLimit()
	dir, err := os.MkdirTemp("", "namecast-p7-")
	if err != nil {
		return p7Result{Error: err.Error()}
	}
	defer os.RemoveAll(dir)
	var join []string
	if addr := os.Getenv(p7JoinEnv); addr != "" {
		join = []string{addr}
	}
	cfg := bench.AgentConfig(fmt.Sprintf("p7-%d", os.Getpid()), "p7", "lan", join)
	p7Doors(&cfg)
	cfg.DataDir = dir
	cfg.ConsulAddr = "127.0.0.1:0"
	// Sessions of 50 from one IP: past 3,000 znodes that is more than
	// ZooKeeper's default 60 connections an IP.
	cfg.ZooKeeperMaxClientConns = -1
	a, err := agent.New(cfg)
	if err != nil {
		return p7Result{Error: err.Error()}
	}
	if err := a.Start(context.Background()); err != nil {
		return p7Result{Error: err.Error()}
	}
	defer a.Shutdown()
	start := time.Now()
	switch parts[0] {
	case "urls":
		pad := strings.Repeat("p", max(0, size-60))
		for i := range n {
			u := fmt.Sprintf("dubbo://10.%d.%d.%d:20880/com.example.Mem?pad=%s", i>>16&255, i>>8&255, i&255, pad)
			if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u, 600*time.Second); err != nil {
				return p7Result{Error: err.Error()}
			}
		}
	case "znodes":
		if err := p7Znodes(a.Addr("zookeeper"), n, size); err != nil {
			return p7Result{Error: err.Error()}
		}
	default:
		return p7Result{Error: "bad kind " + parts[0]}
	}
	res := p7Result{WriteSecs: time.Since(start).Seconds()}
	// What the agent goes on holding, not the garbage of the writes: a
	// collection, then the memory limit's and the scavenger's time to
	// give back what it freed, as a process would a while after.
	runtime.GC()
	time.Sleep(2 * time.Second)
	runtime.GC()
	time.Sleep(time.Second)
	u := a.Table().Usage(a.Table().Local())
	res.Records, res.Bytes = u.Records, u.Bytes
	if dir := os.Getenv(childProf); dir != "" {
		if f, err := os.Create(filepath.Join(dir, "p7-"+parts[0]+".heap.prof")); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	res.RSS = bench.ProcessRSS()
	res.Heap = bench.HeapInUse()
	// The receiver measures what it holds of these records while they
	// are still held: this agent stays until the parent lets it go.
	p7Report(res)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return res
}

// p7Znodes creates n ephemeral znodes of size bytes of data, 50 to a
// session, as many Dubbo or Curator clients register. (One session of
// thousands costs each create more the more it holds: issue 34 item 3.)
func p7Znodes(addr string, n, size int) error {
	if err := p7Session(addr, "/p7", 0, 0, nil); err != nil {
		return err
	}
	for i := 0; i < n; i += 50 {
		if err := p7Session(addr, "", i, min(n, i+50), []byte(strings.Repeat("d", size))); err != nil {
			return err
		}
	}
	return nil
}

// p7Sessions are the writer's open sessions.
var p7Sessions []net.Conn

// p7Session opens a session that creates parent (when set), then
// /p7/n{from..to-1} as ephemeral znodes of data, and keeps it open
// until the process ends.
func p7Session(addr, parent string, from, to int, data []byte) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	if parent != "" {
		defer nc.Close()
	} else {
		p7Sessions = append(p7Sessions, nc) // open, and not collected, until the process ends
	}
	br := bufio.NewReader(nc)
	send := func(body func(*zkwire.Encoder)) error {
		_, err := nc.Write(zkwire.AppendPacket(nil, body))
		return err
	}
	if err := send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 600000, Passwd: make([]byte, 16)}).Encode(e)
	}); err != nil {
		return err
	}
	if _, err := zkwire.ReadPacket(br, zkwire.MaxPacket); err != nil {
		return err
	}
	acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
	xid := int32(0)
	create := func(path string, data []byte, flags int32) (int32, error) {
		xid++
		if err := send(func(e *zkwire.Encoder) {
			(&zkwire.RequestHeader{Xid: xid, Type: zkwire.OpCreate}).Encode(e)
			(&zkwire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: flags}).Encode(e)
		}); err != nil {
			return 0, err
		}
		for {
			b, err := zkwire.ReadPacket(br, zkwire.MaxPacket)
			if err != nil {
				return 0, err
			}
			var h zkwire.ReplyHeader
			h.Decode(zkwire.NewDecoder(b))
			if h.Xid == xid {
				return h.Err, nil
			}
		}
	}
	if parent != "" {
		if code, err := create(parent, nil, 0); err != nil || (code != 0 && code != zkwire.ErrNodeExists) {
			return fmt.Errorf("create %s: %d %v", parent, code, err)
		}
		return nil
	}
	for i := from; i < to; i++ {
		if code, err := create(fmt.Sprintf("/p7/n%06d", i), data, zkwire.FlagEphemeral); err != nil || code != 0 {
			return fmt.Errorf("create ephemeral %d: %d %v", i, code, err)
		}
	}
	// Pings keep the session while the others are created and measured.
	go func() { _, _ = io.Copy(io.Discard, br) }()
	go func() {
		for {
			time.Sleep(2 * time.Second)
			if send(func(e *zkwire.Encoder) { (&zkwire.RequestHeader{Xid: -2, Type: zkwire.OpPing}).Encode(e) }) != nil {
				return
			}
		}
	}()
	return nil
}
