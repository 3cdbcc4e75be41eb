package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

// The mistakes a user makes starting an agent, each answered with what to
// do rather than a timeout or a library's words.

// testAgents starts agents on loopback in a cluster of their own.
type testAgents struct {
	t     *testing.T
	label string
}

func newTestAgents(t *testing.T) *testAgents {
	return &testAgents{t: t, label: fmt.Sprintf("cli-%x", rand.Uint64())}
}

func (ta *testAgents) config(name string, join ...string) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.NodeName = name
	cfg.BindAddr = "127.0.0.1:0"
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.RocketMQAddr = "off"
	cfg.ZooKeeperAddr = "off"
	cfg.NacosAddr = "off"
	cfg.ConsulAddr = "off"
	cfg.DNSAddr = "off"
	cfg.Cluster = ta.label
	cfg.Profile = "local"
	cfg.LeaveTimeout = agent.Duration(2 * time.Second)
	cfg.TuneMemberlist = agenttest.FastFailure
	cfg.Join = join
	return cfg
}

// start starts an agent, stopped at the test's end; it returns Start's error.
func (ta *testAgents) start(cfg agent.Config) (*agent.Agent, error) {
	a, err := agent.New(cfg)
	if err != nil {
		ta.t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		return nil, err
	}
	ta.t.Cleanup(func() { _ = a.Shutdown() })
	return a, nil
}

func (ta *testAgents) mustStart(cfg agent.Config) *agent.Agent {
	a, err := ta.start(cfg)
	if err != nil {
		ta.t.Fatalf("starting %s: %v", cfg.NodeName, err)
	}
	return a
}

// A second agent started under a live member's name is refused, naming
// the live one and its address, whether it joins through that member or
// another; the live one keeps its incarnation. Before, it joined, the two
// raised each other's incarnation in turn, and the log said only that a
// previous run had a higher incarnation.
func TestSecondAgentWithALiveNameIsRefused(t *testing.T) {
	ta := newTestAgents(t)
	a := ta.mustStart(ta.config("a"))
	b := ta.mustStart(ta.config("b", a.GossipAddr()))
	inc := a.Table().LocalInc()
	for _, through := range []*agent.Agent{a, b} {
		_, err := ta.start(ta.config("a", through.GossipAddr()))
		if err == nil {
			t.Fatalf("a second agent named a joined through %s", through.Name())
		}
		if !strings.Contains(err.Error(), `named "a"`) || !strings.Contains(err.Error(), a.GossipAddr()) || !strings.Contains(err.Error(), "--node") {
			t.Errorf("through %s: %v; want the live member's name and address, and --node", through.Name(), err)
		}
	}
	// The refused agents are stopped. Anything they left in the cluster
	// would show within a few anti-entropy rounds (1 s) and probes (200 ms),
	// so the check is repeated every 50 ms for 3 s: a negative check, which
	// no earlier success may end.
	window := time.NewTimer(3 * time.Second)
	defer window.Stop()
	check := time.NewTicker(50 * time.Millisecond)
	defer check.Stop()
	for {
		if now := a.Table().LocalInc(); now != inc {
			t.Fatalf("the live agent's incarnation went from %d to %d", inc, now)
		}
		for _, m := range b.Gossip().Members() {
			if m.Name == "a" && (m.Addr != a.GossipAddr() || m.Status != "alive") {
				t.Fatalf("b lists a as %+v, want alive at %s", m, a.GossipAddr())
			}
		}
		select {
		case <-window.C:
			return
		case <-check.C:
		}
	}
}

// --join pointed at an agent's HTTP port says so, and names the agent's
// gossip address. Before, it reported a read timeout (or, with the lan
// profile's 10 s TCP timeout, "received invalid msgType (72)").
func TestJoinAnHTTPPortSaysSo(t *testing.T) {
	ta := newTestAgents(t)
	a := ta.mustStart(ta.config("a"))
	cfg := ta.config("b", a.HTTPAddr())
	_, err := ta.start(cfg)
	if err == nil || !strings.Contains(err.Error(), "looks like an HTTP port") || !strings.Contains(err.Error(), a.GossipAddr()) {
		t.Fatalf("joining %s (HTTP): %v; want it to say it looks like an HTTP port, and the gossip address %s", a.HTTPAddr(), err, a.GossipAddr())
	}
}

// A taken HTTP port is named with the flag that moves it, as the RocketMQ
// and ZooKeeper ports are.
func TestTakenHTTPPortSaysWhichFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ta := newTestAgents(t)
	cfg := ta.config("a")
	cfg.HTTPAddr = ln.Addr().String()
	_, err = ta.start(cfg)
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || !strings.Contains(err.Error(), "--http HOST:PORT") {
		t.Fatalf("taken HTTP port: %v; want the address and --http HOST:PORT", err)
	}
}

// A taken gossip port is named with the flag that moves it, as the door
// ports are, and the line begins as theirs do: the port, then the cause.
// Before: "starting gossip on ADDR: could not set up network transport:
// failed to start TCP listener on ...: listen tcp ADDR: bind: address
// already in use", the cause last.
func TestTakenGossipPortSaysWhichFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ta := newTestAgents(t)
	cfg := ta.config("a")
	cfg.BindAddr = ln.Addr().String()
	_, err = ta.start(cfg)
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || !strings.Contains(err.Error(), "--bind HOST:PORT") {
		t.Fatalf("taken gossip port: %v; want the address and --bind HOST:PORT", err)
	}
	if want := "gossip port " + ln.Addr().String() + ": listen tcp " + ln.Addr().String() + ": bind: address already in use ("; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("taken gossip port: %v; want it to begin %q", err, want)
	}
}

// A --join that reaches no one says why in one line. Before, memberlist's
// error list came through as it prints itself, "1 error occurred:\n\t*
// failed to join ...\n\n", on the command line, in the log and in
// POST /v1/join's answer.
func TestUnreachableJoinIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	ta := newTestAgents(t)
	_, err = ta.start(ta.config("a", closed))
	if err == nil || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "error occurred") ||
		!strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "--cluster") {
		t.Fatalf("joining a closed port: %q; want one line naming the refusal and what to check", err)
	}
}

// A --data-dir that is a file is refused naming the flag and what it must
// be. Before: "data dir: mkdir PATH: not a directory".
func TestDataDirThatIsAFileSaysWhatItMustBe(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ta := newTestAgents(t)
	cfg := ta.config("a")
	cfg.DataDir = file
	_, err := ta.start(cfg)
	if err == nil || !strings.Contains(err.Error(), "--data-dir "+file) || !strings.Contains(err.Error(), "a directory this agent can write") {
		t.Fatalf("--data-dir a file: %v; want it to name --data-dir and what it must be", err)
	}
}
