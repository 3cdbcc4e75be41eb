package nacos

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

func startServer(t testing.TB, tune ...func(*Config)) (*Server, *hosttest.Fake) {
	t.Helper()
	reg := hosttest.New(routes.NewTable("local", 1))
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
