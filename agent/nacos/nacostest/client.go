// Package nacostest is a minimal Nacos 2.x gRPC client for tests, both
// the door's own (package nacos) and the agent's: one connection, server
// check, bi-stream setup with the pushes it carries, unary calls (decoded,
// or raw bytes for bad-input tests), instance registration, and the two
// ways a client goes (closing its stream, or dying with its TCP
// connection). It speaks the door's wire with nacoswire over net/http's
// cleartext HTTP/2, as the real clients' gRPC does.
package nacostest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// Client is one Nacos gRPC connection, with its bi-stream set up unless
// made by DialNoSetup.
type Client struct {
	t    testing.TB
	hc   *http.Client
	tr   *http.Transport
	base string
	// ConnID is the connection id the server check answered.
	ConnID string

	pw     *io.PipeWriter
	cancel context.CancelFunc
	pushes chan *nacoswire.Payload
	done   chan struct{}
	once   sync.Once

	mu    sync.Mutex
	conns []net.Conn // what the transport dialled, for Kill
}

// Dial connects to the door's gRPC address, checks the server and sets
// the connection up; t's cleanup closes it.
func Dial(t testing.TB, grpcAddr string) *Client {
	t.Helper()
	c := DialNoSetup(t, grpcAddr)
	c.OpenStream()
	c.Send(nacoswire.TypeConnectionSetup, nacoswire.ConnectionSetupRequest{ClientVersion: "nacostest"})
	return c
}

// DialNoSetup connects and checks the server, without opening the
// bi-stream (a client the door has not set up yet); t's cleanup closes
// it.
func DialNoSetup(t testing.TB, grpcAddr string) *Client {
	t.Helper()
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	c := &Client{t: t, base: "http://" + grpcAddr,
		pushes: make(chan *nacoswire.Payload, 100), done: make(chan struct{})}
	c.tr = &http.Transport{Protocols: &protos, MaxConnsPerHost: 1,
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
	t.Cleanup(c.Close)
	var check nacoswire.ServerCheckResponse
	if err := c.Call(nacoswire.TypeServerCheck, nacoswire.Request{RequestID: "1", Module: "internal"}, &check); err != nil {
		t.Fatal(err)
	}
	if !check.Success || check.ConnectionID == "" {
		t.Fatalf("server check: %+v", check)
	}
	c.ConnID = check.ConnectionID
	return c
}

// OpenStream opens the bi-stream; what the door pushes on it is kept for
// NextPush (the last 100 not yet taken; later ones are dropped).
func (c *Client) OpenStream() {
	c.t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", c.base+"/BiRequestStream/requestBiStream", pr)
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

// Send writes a request of type typ on the bi-stream.
func (c *Client) Send(typ string, v any) {
	c.t.Helper()
	if _, err := c.pw.Write(Frame(typ, v)); err != nil {
		c.t.Fatal(err)
	}
}

// NextPush waits up to 10 s for a pushed request of type typ (skipping
// others) and decodes it into out.
func (c *Client) NextPush(typ string, out any) {
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

// Frame is a unary call's body: a request of type typ as one gRPC
// message.
func Frame(typ string, v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return nacoswire.AppendMessage(nil, (&nacoswire.Payload{Type: typ, Body: body}).Marshal())
}

// Call makes a unary call and decodes the answer's body into out.
func (c *Client) Call(typ string, req, out any) error {
	p, err := c.CallRaw(Frame(typ, req))
	if err != nil {
		return fmt.Errorf("%s: %w", typ, err)
	}
	if err := json.Unmarshal(p.Body, out); err != nil {
		return fmt.Errorf("%s: answer %s: %w", typ, p.Body, err)
	}
	return nil
}

// CallRaw sends body as a unary call's and returns the answer.
func (c *Client) CallRaw(body []byte) (*nacoswire.Payload, error) {
	hreq, _ := http.NewRequest("POST", c.base+"/Request/request", bytes.NewReader(body))
	hreq.Header.Set("Content-Type", "application/grpc")
	hreq.Header.Set("TE", "trailers")
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, err := nacoswire.ReadMessage(resp.Body, nacoswire.MaxMessage)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	if st := resp.Trailer.Get("grpc-status"); st != "0" {
		return nil, fmt.Errorf("grpc-status %q: %s", st, resp.Trailer.Get("grpc-message"))
	}
	return nacoswire.Unmarshal(msg)
}

// Register registers an ephemeral instance of service (group
// DEFAULT_GROUP) on this connection; an error is the door's answer.
func (c *Client) Register(service string, in nacoswire.Instance) error {
	return c.instance(nacoswire.RegisterInstance, service, in)
}

// Deregister withdraws this connection's instance.
func (c *Client) Deregister(service string, in nacoswire.Instance) error {
	return c.instance(nacoswire.DeregisterInstance, service, in)
}

func (c *Client) instance(typ, service string, in nacoswire.Instance) error {
	in.Ephemeral = true
	var resp nacoswire.InstanceResponse
	req := nacoswire.InstanceRequest{NamingRequest: nacoswire.NamingRequest{Request: nacoswire.Request{RequestID: "2"},
		ServiceName: service, GroupName: "DEFAULT_GROUP"}, Type: typ, Instance: in}
	if err := c.Call(nacoswire.TypeInstance, req, &resp); err != nil {
		return err
	}
	if !resp.Success {
		return fmt.Errorf("%s: %d %s", typ, resp.ErrorCode, resp.Message)
	}
	return nil
}

// Close ends the bi-stream and the connection, as a client shutting down
// does.
func (c *Client) Close() {
	c.once.Do(func() {
		if c.pw != nil {
			c.pw.Close()
			c.cancel()
			<-c.done
		}
		c.closeConns()
	})
}

// Kill ends the TCP connection without closing the stream first, as a
// process killed -9 does.
func (c *Client) Kill() {
	c.once.Do(func() {
		c.closeConns()
		if c.pw != nil {
			<-c.done
			c.cancel()
		}
	})
}

func (c *Client) closeConns() {
	c.mu.Lock()
	for _, nc := range c.conns {
		nc.Close()
	}
	c.mu.Unlock()
	c.tr.CloseIdleConnections()
}
