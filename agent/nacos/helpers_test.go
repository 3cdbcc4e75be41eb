package nacos

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
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
func (f *fakeRegistry) Drop(string, string) (lease.Saving, error) { return lease.Saving{}, nil }
func (f *fakeRegistry) Forget(string, string) lease.Saving        { return lease.Saving{} }
func (f *fakeRegistry) RestoredLeases(door string) []lease.Lease  { return nil }

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

// rpc is a Nacos gRPC client built on net/http's h2c transport and
// nacoswire: one TCP connection for unary calls and the bi-stream, as the
// real clients keep.
type rpc struct {
	t      testing.TB
	hc     *http.Client
	tr     *http.Transport
	base   string
	connID string

	pw      *io.PipeWriter
	cancel  context.CancelFunc
	pushes  chan *nacoswire.Payload
	done    chan struct{}
	closeMu sync.Once

	mu    sync.Mutex
	conns []net.Conn // what the transport dialled, for kill
}

func dial(t testing.TB, s *Server) *rpc {
	t.Helper()
	c := dialNoSetup(t, s)
	c.openStream()
	c.streamSend(nacoswire.TypeConnectionSetup, nacoswire.ConnectionSetupRequest{ClientVersion: "test"})
	return c
}

// dialNoSetup connects and server-checks, without opening the bi-stream.
func dialNoSetup(t testing.TB, s *Server) *rpc {
	t.Helper()
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	c := &rpc{t: t, base: "http://" + s.GRPCAddr(),
		pushes: make(chan *nacoswire.Payload, 100), done: make(chan struct{})}
	c.tr = &http.Transport{Protocols: &protos, TLSClientConfig: &tls.Config{}, MaxConnsPerHost: 1,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				c.mu.Lock()
				c.conns = append(c.conns, nc)
				c.mu.Unlock()
			}
			return nc, err
		}}
	c.hc = &http.Client{Transport: c.tr}
	t.Cleanup(c.close)
	var check nacoswire.ServerCheckResponse
	c.call(nacoswire.TypeServerCheck, nacoswire.Request{RequestID: "1", Module: "internal"}, &check)
	if !check.Success || check.ConnectionID == "" {
		t.Fatalf("server check: %+v", check)
	}
	c.connID = check.ConnectionID
	return c
}

func (c *rpc) close() {
	c.closeMu.Do(func() {
		if c.pw != nil {
			c.pw.Close()
			c.cancel()
			<-c.done
		}
		c.mu.Lock()
		for _, nc := range c.conns {
			nc.Close()
		}
		c.mu.Unlock()
		c.tr.CloseIdleConnections()
	})
}

// kill ends the TCP connection without closing the stream first, as a
// process killed -9 does.
func (c *rpc) kill() {
	c.closeMu.Do(func() {
		c.mu.Lock()
		for _, nc := range c.conns {
			nc.Close()
		}
		c.mu.Unlock()
		if c.pw != nil {
			<-c.done
		}
		c.cancel()
		c.tr.CloseIdleConnections()
	})
}

func frame(typ string, v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return nacoswire.AppendMessage(nil, (&nacoswire.Payload{Type: typ, Body: body}).Marshal())
}

// callRaw sends raw bytes as a unary call's body and decodes the answer.
func (c *rpc) callRaw(body []byte) *nacoswire.Payload {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.base+pathRequest, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, err := nacoswire.ReadMessage(resp.Body, nacoswire.MaxMessage)
	if err != nil {
		c.t.Fatalf("reading the answer: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	if st := resp.Trailer.Get("grpc-status"); st != "0" {
		c.t.Fatalf("grpc-status %q: %s", st, resp.Trailer.Get("grpc-message"))
	}
	p, err := nacoswire.Unmarshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// call makes a unary call and decodes the answer's body into out; it
// returns the answer's type.
func (c *rpc) call(typ string, req, out any) string {
	c.t.Helper()
	p := c.callRaw(frame(typ, req))
	if err := json.Unmarshal(p.Body, out); err != nil {
		c.t.Fatalf("%s answer %s: %v", typ, p.Body, err)
	}
	return p.Type
}

func (c *rpc) openStream() {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", c.base+pathBiStream, pr)
	req.Header.Set("Content-Type", "application/grpc")
	c.pw, c.cancel = pw, cancel
	started := make(chan error, 1)
	go func() {
		defer close(c.done)
		resp, err := c.hc.Do(req)
		started <- err
		if err != nil {
			return
		}
		defer resp.Body.Close()
		for {
			msg, err := nacoswire.ReadMessage(resp.Body, nacoswire.MaxMessage)
			if err != nil {
				return
			}
			p, err := nacoswire.Unmarshal(msg)
			if err != nil {
				return
			}
			select {
			case c.pushes <- p:
			default:
			}
		}
	}()
	if err := <-started; err != nil {
		c.t.Fatal(err)
	}
}

func (c *rpc) streamSend(typ string, v any) {
	c.t.Helper()
	if _, err := c.pw.Write(frame(typ, v)); err != nil {
		c.t.Fatal(err)
	}
}

// nextPush waits for a pushed request of type typ and decodes it.
func (c *rpc) nextPush(typ string, out any) {
	c.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-c.pushes:
			if p.Type != typ {
				continue
			}
			if err := json.Unmarshal(p.Body, out); err != nil {
				c.t.Fatal(err)
			}
			return
		case <-timeout:
			c.t.Fatalf("no %s pushed within 10s", typ)
		}
	}
}
