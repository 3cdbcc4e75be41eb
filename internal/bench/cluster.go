package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/routes"
)

// Agent is one member of a Cluster.
type Agent struct {
	Name      string
	Agent     *agent.Agent
	Transport *CountingTransport
}

// Table is the agent's route table.
func (a *Agent) Table() *routes.Table { return a.Agent.Table() }

// Cluster is a set of namecast agents joined on 127.0.0.1, each with real
// UDP/TCP sockets on free ports and a counting transport. Its label is
// random, so clusters of different scenarios can never merge.
type Cluster struct {
	Profile string
	label   string
	prefix  string

	mu      sync.Mutex
	running []*Agent
	all     []*Agent
	seq     int
	nudges  atomic.Int64
	opts    []func(*agent.Config)
}

// StartCluster starts n agents with the named gossip profile and waits
// until every one sees n alive members. opts adjust every agent's
// configuration after AgentConfig.
func StartCluster(ctx context.Context, n int, profile string, opts ...func(*agent.Config)) (*Cluster, error) {
	c := &Cluster{Profile: profile, label: "bench-" + strconv.FormatUint(rand.Uint64(), 36), prefix: "nc", opts: opts}
	for range n {
		if _, err := c.Add(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if n >= 100 {
		Progress("    %d %s started; waiting until each sees all", n, "agents")
	}
	if err := c.WaitMembers(ctx, n); err != nil {
		c.Close()
		return nil, err
	}
	Settle(ctx, c.Transports(), SettledRate, 20*time.Second)
	return c, nil
}

// Add starts one more agent, joined to the oldest running one. It does not
// wait for the rest of the cluster to learn about it.
func (c *Cluster) Add() (*Agent, error) {
	c.mu.Lock()
	name := fmt.Sprintf("%s-%03d", c.prefix, c.seq)
	c.seq++
	var join []string
	if len(c.running) > 0 {
		join = []string{c.running[0].Agent.GossipAddr()}
	}
	c.mu.Unlock()

	cfg := AgentConfig(name, c.label, c.Profile, join)
	for _, o := range c.opts {
		o(&cfg)
	}
	var tr *CountingTransport
	var trErr error
	cfg.TuneMemberlist = func(mc *memberlist.Config) {
		if tr, trErr = NewCountingTransport("127.0.0.1"); trErr == nil {
			mc.Transport = tr
		}
	}
	a, err := agent.New(cfg)
	if err != nil {
		return nil, err
	}
	err = a.Start(context.Background())
	if err == nil && trErr != nil {
		err = trErr
		a.Shutdown()
	}
	if err != nil {
		if tr != nil {
			tr.Shutdown() // memberlist may not have taken ownership
		}
		return nil, fmt.Errorf("starting agent %s: %w", name, err)
	}
	m := &Agent{Name: name, Agent: a, Transport: tr}
	c.mu.Lock()
	c.running = append(c.running, m)
	c.all = append(c.all, m)
	c.mu.Unlock()
	return m, nil
}

// Label is the cluster's memberlist label, which an agent needs to join.
func (c *Cluster) Label() string { return c.label }

// AgentConfig is an agent on 127.0.0.1 with free ports, no RocketMQ
// listener, a 5 s leave timeout and no logs, in the cluster labelled label.
func AgentConfig(name, label, profile string, join []string) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.NodeName = name
	cfg.BindAddr = "127.0.0.1:0"
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.RocketMQAddr = "off"
	cfg.ZooKeeperAddr = "off"
	cfg.NacosAddr = "off"
	cfg.DNSAddr = "off"
	cfg.ConsulAddr = "off"
	cfg.Cluster = label
	cfg.Profile = profile
	cfg.Join = join
	cfg.LeaveTimeout = agent.Duration(5 * time.Second)
	cfg.Logger = slog.New(slog.DiscardHandler)
	return cfg
}

// Running returns the running agents, oldest first.
func (c *Cluster) Running() []*Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Agent(nil), c.running...)
}

// Transports returns the running agents' transports.
func (c *Cluster) Transports() []*CountingTransport {
	var out []*CountingTransport
	for _, a := range c.Running() {
		out = append(out, a.Transport)
	}
	return out
}

// Detach removes a from the running set, for a caller about to stop it
// (Shutdown or Leave) itself. Close still makes sure it is stopped.
func (c *Cluster) Detach(a *Agent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range c.running {
		if r == a {
			c.running = append(c.running[:i], c.running[i+1:]...)
			return
		}
	}
}

// RandomMember picks a running agent other than the first (the join
// target), so stopping it never strands later joins.
func (c *Cluster) RandomMember() *Agent {
	r := c.Running()
	if len(r) < 2 {
		return r[0]
	}
	return r[1+rand.IntN(len(r)-1)]
}

// WaitMembers waits until every running agent sees n alive members,
// nudging an agent that lacks only a few (see waitMembers).
func (c *Cluster) WaitMembers(ctx context.Context, n int) error {
	return waitMembers(ctx, func() (lagging []laggard) {
		r := c.Running()
		for _, a := range r {
			if a.Agent.Gossip().AliveMembers() == n {
				continue
			}
			lagging = append(lagging, laggard{
				missing: func() (addrs []string) {
					alive := map[string]bool{}
					for _, m := range a.Agent.Gossip().Members() {
						alive[m.Name] = m.Status == "alive" || m.Status == "suspect"
					}
					for _, b := range r {
						if !alive[b.Name] {
							addrs = append(addrs, b.Agent.GossipAddr())
						}
					}
					return addrs
				},
				join: func(addrs []string) {
					c.nudges.Add(int64(len(addrs)))
					_, _ = a.Agent.Gossip().Join(addrs)
				},
			})
		}
		return lagging
	})
}

// Nudges is how many missed members WaitMembers had to join by hand.
func (c *Cluster) Nudges() int { return int(c.nudges.Load()) }

// WaitConverged waits until every running agent holds the same digest.
func (c *Cluster) WaitConverged(ctx context.Context, timeout time.Duration) error {
	return poll(ctx, timeout, func() error {
		r := c.Running()
		want := r[0].Table().Summary()
		for _, a := range r[1:] {
			if a.Table().Summary() != want {
				return fmt.Errorf("%s's digest differs from %s's", a.Name, r[0].Name)
			}
		}
		return nil
	})
}

// Close stops every agent ever started, in parallel and without leaving
// (nobody stays to be told), and waits until they and their transports
// have let go of their ports.
func (c *Cluster) Close() {
	c.mu.Lock()
	all := c.all
	c.running, c.all = nil, nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Agent.Shutdown()
			if a.Transport != nil {
				a.Transport.Shutdown()
			}
		}()
	}
	wg.Wait()
}
