package rocketmq

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// fakeRegistry is an agent without gossip: a routes.Table whose changes
// are handed synchronously to its peers' tables, so several fakes behave
// like a converged cluster.
type fakeRegistry struct {
	table *routes.Table
	ready atomic.Bool
	mu    sync.Mutex
	peers []*fakeRegistry
	// beforeApply, when set, runs at the start of every Apply (tests use it
	// to hold a registration).
	beforeApply atomic.Pointer[func()]
	leases      map[string]lease.Lease // guarded by mu
	restored    []lease.Lease          // handed out once by RestoredLeases
	rulesErr    error                  // guarded by mu: every ApplyRules fails with it
	leaseErr    error                  // guarded by mu: every PutLease and DropLease fails with it
	budget      routes.Budget          // bounds the local records, as the agent's host does
	// hold, while set, keeps this agent's deltas from its peers until the
	// test hands their ops on (deliver), as gossip may, in any order.
	hold atomic.Bool
	held []routes.Delta // guarded by mu
}

// deliver hands the held ops that pick selects to every peer, one delta
// per op, and keeps the others held.
func (f *fakeRegistry) deliver(pick func(routes.Op) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []routes.Delta
	for _, d := range f.held {
		rest := d
		rest.Ops = nil
		for _, op := range d.Ops {
			if !pick(op) {
				rest.Ops = append(rest.Ops, op)
				continue
			}
			one := d
			one.Ops = []routes.Op{op}
			for _, p := range f.peers {
				p.table.Apply(one)
			}
		}
		if len(rest.Ops) > 0 {
			keep = append(keep, rest)
		}
	}
	f.held = keep
}

func newFakeCluster(names ...string) []*fakeRegistry {
	var regs []*fakeRegistry
	for i, n := range names {
		r := &fakeRegistry{table: routes.NewTable(n, uint64(i+1))}
		r.ready.Store(true)
		regs = append(regs, r)
	}
	for _, r := range regs {
		for _, p := range regs {
			if p != r {
				r.peers = append(r.peers, p)
			}
		}
	}
	return regs
}

func newFake() *fakeRegistry { return newFakeCluster("agent-a")[0] }

func (f *fakeRegistry) Apply(puts []routes.Record, deletes []string) (bool, error) {
	if hook := f.beforeApply.Load(); hook != nil {
		(*hook)()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok, err := f.table.ApplyLocalWithin(puts, deletes, f.budget, routes.Usage{}, nil)
	if err != nil {
		return false, err
	}
	if ok && f.hold.Load() {
		f.held = append(f.held, d)
		return ok, nil
	}
	if ok {
		for _, p := range f.peers {
			p.table.Apply(d)
		}
	}
	return ok, nil
}

func (f *fakeRegistry) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rulesErr != nil {
		return false, f.rulesErr
	}
	d, ok := f.table.ApplyRules(puts, deletes)
	if ok {
		for _, p := range f.peers {
			p.table.Apply(d)
		}
	}
	return ok, nil
}

func (f *fakeRegistry) LocalRecords(prefix string) []routes.Record {
	return f.table.LocalRecords(prefix)
}
func (f *fakeRegistry) TopicRoute(topic string) (routes.TopicRoute, bool) {
	return f.table.TopicRoute(topic)
}
func (f *fakeRegistry) Table() *routes.Table { return f.table }

func (f *fakeRegistry) PutLease(l lease.Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leaseErr != nil {
		return f.leaseErr
	}
	if f.leases == nil {
		f.leases = map[string]lease.Lease{}
	}
	f.leases[l.Door+"/"+l.ID] = l
	return nil
}

// Hold is PutLease before the change is applied, as the agent's is.
func (f *fakeRegistry) Hold(l lease.Lease, recs []routes.Record) (lease.Saving, error) {
	if _, _, err := f.table.CheckLocal(recs, nil, f.budget, routes.Usage{}); err != nil {
		return lease.Saving{}, err
	}
	return lease.Saving{}, f.PutLease(l)
}

// HoldAll is Hold and Drop of each.
func (f *fakeRegistry) HoldAll(cs []lease.Change) (lease.Saving, error) {
	for _, c := range cs {
		var err error
		if c.Drop {
			err = f.DropLease(c.Lease.Door, c.Lease.ID)
		} else {
			err = f.PutLease(c.Lease)
		}
		if err != nil {
			return lease.Saving{}, err
		}
	}
	return lease.Saving{}, nil
}

// Undo is HoldAll.
func (f *fakeRegistry) Undo(cs []lease.Change) (lease.Saving, error) { return f.HoldAll(cs) }

// Drop is DropLease before the records are withdrawn, as the agent's is.
func (f *fakeRegistry) Drop(door, id string) (lease.Saving, error) {
	return lease.Saving{}, f.DropLease(door, id)
}

// Forget drops the lease whatever the data dir does, as the agent's does.
func (f *fakeRegistry) Forget(door, id string) lease.Saving {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.leases, door+"/"+id)
	return lease.Saving{}
}

func (f *fakeRegistry) DropLease(door, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.leaseErr != nil {
		return f.leaseErr
	}
	delete(f.leases, door+"/"+id)
	return nil
}

// RestoredLeases hands back what was put, as an agent restarted with its
// data dir would.
func (f *fakeRegistry) RestoredLeases(door string) []lease.Lease {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []lease.Lease
	for _, l := range f.restored {
		if l.Door == door {
			out = append(out, l)
		}
	}
	f.restored = nil
	return out
}
func (f *fakeRegistry) Ready() bool { return f.ready.Load() }

func testLogger() *slog.Logger {
	if os.Getenv("NAMECAST_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// startServer serves reg on a free loopback port until the test ends.
func startServer(t testing.TB, reg host.Host, tune ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{Host: reg, Logger: testLogger()}
	for _, f := range tune {
		f(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ServeDoor(t, s)
	return s
}

func dial(t testing.TB, s *Server) *rocketmqtest.Client {
	t.Helper()
	c, err := rocketmqtest.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// do sends a request and fails the test on a transport error.
func do(t testing.TB, c *rocketmqtest.Client, code int, ext map[string]string, body []byte) *remoting.Command {
	t.Helper()
	resp, err := c.Do(code, ext, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func wantCode(t testing.TB, resp *remoting.Command, code int, remark string) {
	t.Helper()
	if resp.Code != code || (remark != "" && resp.Remark != remark) {
		t.Fatalf("got code %d remark %q, want code %d remark %q", resp.Code, resp.Remark, code, remark)
	}
}

func register(t testing.TB, c *rocketmqtest.Client, b *rocketmqtest.Broker) *remoting.Command {
	t.Helper()
	resp, err := c.Register(b)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// brokerA is a 5.x master with two topics.
func brokerA() *rocketmqtest.Broker {
	return &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: 0, Addr: "10.0.0.1:10911", HAAddr: "10.0.0.1:10912",
		Topics:      map[string]remoting.TopicConfig{"TopicTest": rocketmqtest.Topic("TopicTest", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)},
		DataVersion: remoting.DataVersion{Counter: 1, Timestamp: 1700000000000}}
}

// route fetches and decodes a route; nil when the answer is not SUCCESS.
func route(t testing.TB, c *rocketmqtest.Client, topic string) *remoting.TopicRouteData {
	t.Helper()
	resp, err := c.Route(topic, remoting.VersionCurrent)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != remoting.Success {
		return nil
	}
	var td remoting.TopicRouteData
	if err := remoting.Unmarshal(resp.Body, &td); err != nil {
		t.Fatalf("route body %q: %v", resp.Body, err)
	}
	return &td
}

// perms maps broker name to the topic's perm in its route.
func perms(t testing.TB, c *rocketmqtest.Client, topic string) map[string]int {
	t.Helper()
	out := map[string]int{}
	if td := route(t, c, topic); td != nil {
		for _, q := range td.QueueDatas {
			out[q.BrokerName] = q.Perm
		}
	}
	return out
}

// routeEventually waits until the topic's route satisfies cond.
func routeEventually(t testing.TB, c *rocketmqtest.Client, topic string, cond func(*remoting.TopicRouteData) error) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error { return cond(route(t, c, topic)) })
}

func gone(td *remoting.TopicRouteData) error {
	if td != nil {
		return fmt.Errorf("route still served: %+v", td)
	}
	return nil
}

// fakeClock is a settable clock for expiry tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
