package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"
)

// SerfMember is one serf.Serf of a SerfCluster.
type SerfMember struct {
	Name      string
	Serf      *serf.Serf
	Transport *CountingTransport
}

// SerfCluster is the peer: serf.Serf instances on 127.0.0.1 on the same
// memberlist configuration as the namecast profile they are compared with.
// Every member's events are consumed at once and handed to whatever
// Arrivals is registered for them.
type SerfCluster struct {
	ml    func() *memberlist.Config
	label string

	mu      sync.Mutex
	running []*SerfMember
	all     []*SerfMember
	seq     int
	watch   map[string]*Arrivals // by event key, see eventKeys
	nudges  atomic.Int64

	stop chan struct{}
	wg   sync.WaitGroup
}

// StartSerfCluster starts n serf members, each on a fresh copy of the
// memberlist configuration ml returns, and waits until all see n alive.
func StartSerfCluster(ctx context.Context, n int, ml func() *memberlist.Config) (*SerfCluster, error) {
	c := &SerfCluster{ml: ml, label: "bench-serf-" + strconv.FormatUint(rand.Uint64(), 36),
		watch: map[string]*Arrivals{}, stop: make(chan struct{})}
	for range n {
		if _, err := c.Add(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if n >= 100 {
		Progress("    %d %s started; waiting until each sees all", n, "members")
	}
	if err := c.WaitMembers(ctx, n); err != nil {
		c.Close()
		return nil, err
	}
	Settle(ctx, c.Transports(), SettledRate, 20*time.Second)
	return c, nil
}

// Add starts one more member joined to the oldest running one.
func (c *SerfCluster) Add() (*SerfMember, error) {
	c.mu.Lock()
	name := fmt.Sprintf("serf-%03d", c.seq)
	c.seq++
	var join string
	if len(c.running) > 0 {
		join = c.running[0].Serf.Memberlist().LocalNode().Address()
	}
	c.mu.Unlock()

	tr, err := newCountingTransport("127.0.0.1", true)
	if err != nil {
		return nil, err
	}
	conf := serf.DefaultConfig()
	conf.NodeName = name
	conf.LogOutput = io.Discard
	conf.MemberlistConfig = c.ml()
	conf.MemberlistConfig.BindAddr = "127.0.0.1"
	conf.MemberlistConfig.BindPort = tr.Port()
	conf.MemberlistConfig.Transport = tr
	conf.MemberlistConfig.Label = c.label
	conf.MemberlistConfig.LogOutput = io.Discard
	conf.MemberlistConfig.Logger = nil
	events := make(chan serf.Event, 1024)
	conf.EventCh = events
	s, err := serf.Create(conf)
	if err != nil {
		tr.Shutdown()
		return nil, fmt.Errorf("starting serf %s: %w", name, err)
	}
	c.wg.Add(1)
	go c.consume(name, events)
	if join != "" {
		if _, err := s.Join([]string{join}, true); err != nil {
			s.Shutdown()
			return nil, fmt.Errorf("serf %s joining %s: %w", name, join, err)
		}
	}
	m := &SerfMember{Name: name, Serf: s, Transport: tr}
	c.mu.Lock()
	c.running = append(c.running, m)
	c.all = append(c.all, m)
	c.mu.Unlock()
	return m, nil
}

// consume takes member's events as they come, so serf never blocks on a
// full channel, and stamps them on arrival.
func (c *SerfCluster) consume(member string, events <-chan serf.Event) {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case ev := <-events:
			now := time.Now()
			for _, key := range eventKeys(ev) {
				c.mu.Lock()
				a := c.watch[key]
				c.mu.Unlock()
				if a != nil {
					a.Mark(member, now)
				}
			}
		}
	}
}

// eventKeys names what an event tells: "user:NAME" for a user event,
// "failed:MEMBER", "leave:MEMBER" and "join:MEMBER" for member events.
func eventKeys(ev serf.Event) []string {
	switch e := ev.(type) {
	case serf.UserEvent:
		return []string{"user:" + e.Name}
	case serf.MemberEvent:
		prefix := map[serf.EventType]string{serf.EventMemberFailed: "failed:", serf.EventMemberLeave: "leave:", serf.EventMemberJoin: "join:"}[e.Type]
		if prefix == "" {
			return nil
		}
		keys := make([]string, len(e.Members))
		for i, m := range e.Members {
			keys[i] = prefix + m.Name
		}
		return keys
	}
	return nil
}

// Expect registers a for events with key (see eventKeys) until forget.
func (c *SerfCluster) Expect(key string, a *Arrivals) (forget func()) {
	c.mu.Lock()
	c.watch[key] = a
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.watch, key)
		c.mu.Unlock()
	}
}

// Running returns the running members, oldest first.
func (c *SerfCluster) Running() []*SerfMember {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*SerfMember(nil), c.running...)
}

// Names lists the running members' names.
func (c *SerfCluster) Names() []string {
	var out []string
	for _, m := range c.Running() {
		out = append(out, m.Name)
	}
	return out
}

// Transports returns the running members' transports.
func (c *SerfCluster) Transports() []*CountingTransport {
	var out []*CountingTransport
	for _, m := range c.Running() {
		out = append(out, m.Transport)
	}
	return out
}

// RandomMember picks a running member other than the join target.
func (c *SerfCluster) RandomMember() *SerfMember {
	r := c.Running()
	if len(r) < 2 {
		return r[0]
	}
	return r[1+rand.IntN(len(r)-1)]
}

// Detach removes m from the running set before the caller stops it.
func (c *SerfCluster) Detach(m *SerfMember) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, r := range c.running {
		if r == m {
			c.running = append(c.running[:i], c.running[i+1:]...)
			return
		}
	}
}

// WaitMembers waits until every running member sees n alive members,
// nudging laggards as Cluster.WaitMembers does.
func (c *SerfCluster) WaitMembers(ctx context.Context, n int) error {
	return waitMembers(ctx, func() (lagging []laggard) {
		r := c.Running()
		for _, m := range r {
			alive := 0
			for _, mem := range m.Serf.Members() {
				if mem.Status == serf.StatusAlive {
					alive++
				}
			}
			if alive == n {
				continue
			}
			lagging = append(lagging, laggard{
				missing: func() (addrs []string) {
					seen := map[string]bool{}
					for _, mem := range m.Serf.Members() {
						seen[mem.Name] = mem.Status == serf.StatusAlive
					}
					for _, o := range r {
						if !seen[o.Name] {
							addrs = append(addrs, o.Serf.Memberlist().LocalNode().Address())
						}
					}
					return addrs
				},
				join: func(addrs []string) {
					c.nudges.Add(int64(len(addrs)))
					_, _ = m.Serf.Join(addrs, true)
				},
			})
		}
		return lagging
	})
}

// Nudges is how many missed members WaitMembers had to join by hand.
func (c *SerfCluster) Nudges() int { return int(c.nudges.Load()) }

// Close shuts every member down, then stops the event consumers: members
// first, so none is left blocked sending an event nobody reads.
func (c *SerfCluster) Close() {
	c.mu.Lock()
	all := c.all
	c.running, c.all = nil, nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Serf.Shutdown()
			m.Transport.Shutdown()
		}()
	}
	wg.Wait()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.wg.Wait()
}
