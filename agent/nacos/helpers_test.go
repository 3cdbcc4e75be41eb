package nacos

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// fakeRegistry is an agent reduced to its table: local records and rules
// change it directly, nothing is gossiped.
type fakeRegistry struct {
	t        *routes.Table
	notYet   atomic.Bool
	rulesErr atomic.Pointer[error] // every ApplyRules fails with it when set
}

func (f *fakeRegistry) Apply(puts []routes.Record, deletes []string) bool {
	_, ok := f.t.ApplyLocal(puts, deletes)
	return ok
}

func (f *fakeRegistry) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	if err := f.rulesErr.Load(); err != nil {
		return false, *err
	}
	_, ok := f.t.ApplyRules(puts, deletes)
	return ok, nil
}

func (f *fakeRegistry) Table() *routes.Table { return f.t }
func (f *fakeRegistry) Ready() bool          { return !f.notYet.Load() }

// The rest of host.Host: reads of the table, and no leases kept.
func (f *fakeRegistry) LocalRecords(prefix string) []routes.Record { return f.t.LocalRecords(prefix) }
func (f *fakeRegistry) TopicRoute(topic string) (routes.TopicRoute, bool) {
	return f.t.TopicRoute(topic)
}
func (f *fakeRegistry) PutLease(lease.Lease) error      { return nil }
func (f *fakeRegistry) DropLease(door, id string) error { return nil }
func (f *fakeRegistry) Hold(lease.Lease, []routes.Record) (lease.Saving, error) {
	return lease.Saving{}, nil
}
func (f *fakeRegistry) Drop(string, string) (lease.Saving, error)    { return lease.Saving{}, nil }
func (f *fakeRegistry) Forget(string, string) lease.Saving           { return lease.Saving{} }
func (f *fakeRegistry) HoldAll([]lease.Change) (lease.Saving, error) { return lease.Saving{}, nil }
func (f *fakeRegistry) Undo([]lease.Change) (lease.Saving, error)    { return lease.Saving{}, nil }
func (f *fakeRegistry) RestoredLeases(door string) []lease.Lease     { return nil }

func startServer(t testing.TB, tune ...func(*Config)) (*Server, *fakeRegistry) {
	t.Helper()
	reg := &fakeRegistry{t: routes.NewTable("local", 1)}
	return startOn(t, reg, tune...), reg
}

func startOn(t testing.TB, reg host.Host, tune ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{Addr: "127.0.0.1:0", Host: reg, Grace: 100 * time.Millisecond}
	for _, f := range tune {
		f(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rpc is nacostest's client with its calls failing the test: what the
// door answers is what these tests look at.
type rpc struct {
	*nacostest.Client
	t testing.TB
}

func dial(t testing.TB, s *Server) *rpc {
	t.Helper()
	return &rpc{nacostest.Dial(t, s.GRPCAddr()), t}
}

// dialNoSetup connects and server-checks, without opening the bi-stream.
func dialNoSetup(t testing.TB, s *Server) *rpc {
	t.Helper()
	return &rpc{nacostest.DialNoSetup(t, s.GRPCAddr()), t}
}

// callRaw sends raw bytes as a unary call's body and decodes the answer.
func (c *rpc) callRaw(body []byte) *nacoswire.Payload {
	c.t.Helper()
	p, err := c.CallRaw(body)
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// call makes a unary call and decodes the answer's body into out; it
// returns the answer's type.
func (c *rpc) call(typ string, req, out any) string {
	c.t.Helper()
	p := c.callRaw(nacostest.Frame(typ, req))
	if err := json.Unmarshal(p.Body, out); err != nil {
		c.t.Fatalf("%s answer %s: %v", typ, p.Body, err)
	}
	return p.Type
}
