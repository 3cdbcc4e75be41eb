// Package agenttest starts in-process clusters of namecast agents on
// loopback for tests: free ports, a random cluster label so parallel tests
// never merge, faster failure detection, and cleanup registered with the
// test.
package agenttest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/internal/testutil"
)

// Cluster is a set of agents joined into one cluster.
type Cluster struct {
	t      testing.TB
	label  string
	mu     sync.Mutex
	agents []*agent.Agent
	cfgs   []agent.Config
	bound  []map[string]string // each slot's door listeners' last addresses, by listener name
	tune   func(*memberlist.Config)
}

// Option adjusts every agent's configuration.
type Option func(*agent.Config)

// WithProfile selects a timing profile (the default is "local" tuned for
// quick failure detection).
func WithProfile(p string) Option {
	return func(c *agent.Config) { c.Profile = p; c.TuneMemberlist = nil }
}

// WithDataDirs gives each agent its own data dir under dir.
func WithDataDirs(dir string) Option {
	return func(c *agent.Config) { c.DataDir = filepath.Join(dir, c.NodeName) }
}

// FastFailure makes SWIM declare a crashed member dead within ~1-2 s.
func FastFailure(mc *memberlist.Config) {
	mc.ProbeInterval = 200 * time.Millisecond
	mc.ProbeTimeout = 100 * time.Millisecond
	mc.SuspicionMult = 3
	mc.GossipInterval = 50 * time.Millisecond
	mc.PushPullInterval = 5 * time.Second
	mc.TCPTimeout = 2 * time.Second
}

// Start starts n agents on loopback and joins them; t's cleanup stops them.
func Start(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	c := &Cluster{t: t, label: "test-" + strconv.FormatUint(rand.Uint64(), 36)}
	t.Cleanup(c.Close)
	for i := 0; i < n; i++ {
		cfg := agent.DefaultConfig()
		cfg.NodeName = fmt.Sprintf("agent-%d", i)
		cfg.BindAddr = "127.0.0.1:0"
		for _, d := range cfg.Doors() {
			if *d.Addr != "off" { // a door off by default (multicast) stays off unless an option turns it on
				*d.Addr = "127.0.0.1:0"
			}
		}
		cfg.Cluster = c.label
		cfg.Profile = "local"
		cfg.LeaveTimeout = agent.Duration(2 * time.Second)
		cfg.TuneMemberlist = FastFailure
		if os.Getenv("NAMECAST_TEST_LOG") != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		for _, o := range opts {
			o(&cfg)
		}
		if i > 0 {
			cfg.Join = []string{c.agents[0].GossipAddr()}
		}
		c.cfgs = append(c.cfgs, cfg)
		c.bound = append(c.bound, map[string]string{})
		c.agents = append(c.agents, c.startAgent(i, cfg))
	}
	c.WaitMembers(n)
	return c
}

// startAgent starts the agent of slot i. A door listener on port 0 binds
// where the slot's last agent's did, when it had one (the same host coming
// back): Crash and Leave remember them.
func (c *Cluster) startAgent(i int, cfg agent.Config) *agent.Agent {
	c.t.Helper()
	c.mu.Lock()
	bound := maps.Clone(c.bound[i])
	c.mu.Unlock()
	listen := cfg.Listen
	listenOn := func(name, addr string) (net.Listener, error) {
		if listen != nil {
			return listen(name, addr)
		}
		return net.Listen("tcp", addr)
	}
	cfg.Listen = func(name, addr string) (net.Listener, error) {
		last, ok := bound[name]
		if !ok || !strings.HasSuffix(addr, ":0") {
			return listenOn(name, addr)
		}
		ln, err := listenOn(name, last)
		if !errors.Is(err, syscall.EADDRINUSE) {
			return ln, err
		}
		// The port came from the ephemeral range, and while the agent was
		// down another socket of this machine (an outgoing connection's
		// local port, another test's listener) took it: the host comes back
		// on a new port rather than failing the test.
		c.t.Logf("agent-%d: %s's last address %s is taken by another socket; listening on a new port", i, name, last)
		return listenOn(name, addr)
	}
	a, err := agent.New(cfg)
	if err != nil {
		c.t.Fatalf("agent %s: %v", cfg.NodeName, err)
	}
	if err := a.Start(context.Background()); err != nil {
		c.t.Fatalf("starting agent %s: %v", cfg.NodeName, err)
	}
	return a
}

// Agent returns agent i (nil once stopped).
func (c *Cluster) Agent(i int) *agent.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agents[i]
}

// Len is the number of agent slots, running or not.
func (c *Cluster) Len() int { return len(c.agents) }

// Running lists the indexes of running agents.
func (c *Cluster) Running() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for i, a := range c.agents {
		if a != nil {
			out = append(out, i)
		}
	}
	return out
}

// Crash stops agent i without leaving, as a killed process would. Its
// addresses are kept for Restart: the same host coming back.
func (c *Cluster) Crash(i int) {
	if a := c.take(i); a != nil {
		a.Shutdown()
	}
}

// Leave makes agent i leave gracefully.
func (c *Cluster) Leave(i int) {
	if a := c.take(i); a != nil {
		if err := a.Leave(context.Background()); err != nil {
			c.t.Logf("leave agent-%d: %v", i, err)
		}
	}
}

// take empties slot i and returns its agent, if any, having kept where it
// listens for its restart: its gossip address and every door listener's.
func (c *Cluster) take(i int) *agent.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.agents[i]
	c.agents[i] = nil
	if a == nil {
		return nil
	}
	c.cfgs[i].BindAddr = a.GossipAddr()
	for _, d := range a.Doors() {
		if _, _, err := net.SplitHostPort(d.Addr); err == nil && !strings.HasPrefix(d.Addr, "mem:") {
			c.bound[i][d.Name] = d.Addr
		}
	}
	return a
}

// Restart crashes agent i if it runs, then starts it again under the same
// name, gossip and HTTP addresses (the same host coming back), joined to a
// running agent.
func (c *Cluster) Restart(i int) *agent.Agent {
	c.t.Helper()
	return c.RestartWith(i, nil)
}

// RestartWith is Restart with a last change to the configuration (clear
// Join to test rejoining from the data dir).
func (c *Cluster) RestartWith(i int, edit func(*agent.Config)) *agent.Agent {
	c.t.Helper()
	c.Crash(i)
	cfg := c.cfgs[i]
	cfg.Join = nil
	for _, j := range c.Running() {
		cfg.Join = []string{c.Agent(j).GossipAddr()}
		break
	}
	if edit != nil {
		edit(&cfg)
	}
	a := c.startAgent(i, cfg)
	c.mu.Lock()
	c.agents[i] = a
	c.mu.Unlock()
	return a
}

// WaitMembers waits until every running agent sees n alive members.
//
// Beyond ~20 members a join's alive message, retransmitted only
// RetransmitMult·log10(n+1) times, misses a member now and then, which
// then learns of the joiner at its next push/pull (30 s and more on the
// lan profile): so the wait grows with the cluster instead of failing a
// figure run at 50 agents.
func (c *Cluster) WaitMembers(n int) {
	c.t.Helper()
	wait := 20 * time.Second
	if n > 20 {
		wait = 3 * time.Minute
	}
	testutil.Eventually(c.t, wait, func() error {
		for _, i := range c.Running() {
			if got := c.Agent(i).Gossip().AliveMembers(); got != n {
				return fmt.Errorf("agent-%d sees %d members, want %d", i, got, n)
			}
		}
		return nil
	})
}

// Converged reports nil once every running agent holds an identical digest.
func (c *Cluster) Converged() error {
	var first string
	var want uint64
	for _, i := range c.Running() {
		a := c.Agent(i)
		sum := a.Table().Digest().Summary()
		if first == "" {
			first, want = a.Name(), sum
		} else if sum != want {
			return fmt.Errorf("%s's digest differs from %s's", a.Name(), first)
		}
	}
	return nil
}

// Close stops every agent still running.
func (c *Cluster) Close() {
	for i := range c.agents {
		c.Crash(i)
	}
}
