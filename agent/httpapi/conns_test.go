package httpapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// lockedBuffer is a log sink several goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBounded is startLone with MaxConns, a log and an in-memory sink.
func startBounded(t *testing.T, maxConns int, logs io.Writer) (*Server, *metrics.InmemSink) {
	t.Helper()
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	mc := metrics.DefaultConfig("namecast")
	mc.EnableHostname, mc.EnableRuntimeMetrics = false, false
	m, err := metrics.New(mc, sink)
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(host.Config{Table: routes.NewTable("lone", 1)})
	s, err := New(Config{Host: h, Agent: loneAgent{}, Node: "lone", Addr: "127.0.0.1:0", MaxConns: maxConns,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, sink
}

// keepAlive is one HTTP/1.1 connection a test asks over and keeps open.
type keepAlive struct {
	nc net.Conn
	br *bufio.Reader
}

func openConn(t *testing.T, s *Server) *keepAlive {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &keepAlive{nc: nc, br: bufio.NewReader(nc)}
}

// health asks GET /v1/health and returns the status, or why none came.
func (k *keepAlive) health() (int, error) {
	k.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(k.nc, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// The HTTP door holds at most MaxConns connections: past it a new one is
// answered 503 before its request is read and closed, logged and counted;
// one that ends makes room at once.
func TestHTTPConnectionsPastMaxConnsAreRefused(t *testing.T) {
	testutil.CheckLeaks(t)
	var logs lockedBuffer
	s, sink := startBounded(t, 2, &logs)
	held := []*keepAlive{openConn(t, s), openConn(t, s)}
	for i, k := range held {
		if code, err := k.health(); err != nil || code != http.StatusOK {
			t.Fatalf("connection %d within the bound: %d, %v", i, code, err)
		}
	}
	code, err := openConn(t, s).health()
	if err == nil && code != http.StatusServiceUnavailable {
		t.Fatalf("a third connection past MaxConns 2 was answered %d", code)
	}
	// The 503 is best effort: the refused connection is closed with the
	// request unread, which may reset it before the answer is read.
	t.Logf("the refused connection: %d, %v", code, err)
	if !strings.Contains(logs.String(), "too many HTTP connections") {
		t.Errorf("no log line said why the connection was refused; logs:\n%s", logs.String())
	}
	var refused float64
	for _, iv := range sink.Data() {
		if c, ok := iv.Counters["namecast.http.connections_refused"]; ok {
			refused += c.Sum
		}
	}
	if refused != 1 {
		t.Errorf("http.connections_refused = %v, want 1", refused)
	}
	held[0].nc.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		code, err := openConn(t, s).health()
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("a new connection after one ended: %d, %v", code, err)
		}
		return nil
	})
	if code, err := held[1].health(); err != nil || code != http.StatusOK {
		t.Errorf("a connection held all along: %d, %v", code, err)
	}
}

// Headers past maxHeaderBytes are refused (431), and the door's
// connections have every timeout set: headers, body, idle, and answers.
func TestHTTPConnectionTimeoutsAndHeaderBound(t *testing.T) {
	s := startLone(t)
	if c := s.srv; c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.IdleTimeout <= 0 || c.WriteTimeout <= 0 {
		t.Errorf("timeouts: header %v, body %v, idle %v, write %v; want all set",
			c.ReadHeaderTimeout, c.ReadTimeout, c.IdleTimeout, c.WriteTimeout)
	}
	k := openConn(t, s)
	k.nc.SetDeadline(time.Now().Add(10 * time.Second))
	big := strings.Repeat("x", 2*maxHeaderBytes)
	if _, err := io.WriteString(k.nc, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+big+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(k.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("headers of %d KiB answered %d, want 431", len(big)>>10, resp.StatusCode)
	}
}
