package rocketmq

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// dialFrom connects to s from the loopback address src (127.0.0.0/8 is
// all loopback on Linux), so a test has several client IPs.
func dialFrom(t *testing.T, s *Server, src string) *rocketmqtest.Client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Skipf("cannot dial from %s: %v", src, err)
	}
	c := rocketmqtest.NewClient(nc)
	t.Cleanup(func() { c.Close() })
	return c
}

// served reports whether c's connection is served: a query answered.
func served(c *rocketmqtest.Client) error {
	resp, err := c.Do(remoting.GetKVConfig, map[string]string{"namespace": "n", "key": "k"}, nil)
	if err != nil {
		return err
	}
	if resp.Code != remoting.QueryNotFound {
		return fmt.Errorf("answered code %d, want QUERY_NOT_FOUND", resp.Code)
	}
	return nil
}

// A connection past MaxConnsPerIP from one client IP, or past MaxConns in
// all, is closed unanswered, logged and counted; another IP is still let
// in under its own bound; a connection that ends makes room at once.
func TestConnectionsPastTheBoundsAreRefused(t *testing.T) {
	testutil.CheckLeaks(t)
	var logs testutil.Buffer
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	mc := metrics.DefaultConfig("namecast")
	mc.EnableHostname, mc.EnableRuntimeMetrics = false, false
	m, err := metrics.New(mc, sink)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, newFake(), func(c *Config) {
		c.MaxConnsPerIP, c.MaxConns = 2, 3
		c.Metrics, c.ScanInterval = m, time.Hour
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	a1, a2 := dialFrom(t, s, "127.0.0.1"), dialFrom(t, s, "127.0.0.1")
	for _, c := range []*rocketmqtest.Client{a1, a2} {
		if err := served(c); err != nil {
			t.Fatalf("a connection within the bounds: %v", err)
		}
	}
	if err := served(dialFrom(t, s, "127.0.0.1")); err == nil {
		t.Fatal("a third connection from 127.0.0.1 was served past MaxConnsPerIP 2")
	}
	if !strings.Contains(logs.String(), "MaxConnsPerIP") {
		t.Errorf("no log line said why the connection was refused; logs:\n%s", logs.String())
	}
	b1 := dialFrom(t, s, "127.0.0.2")
	if err := served(b1); err != nil {
		t.Fatalf("a connection from another IP, within MaxConns 3: %v", err)
	}
	if err := served(dialFrom(t, s, "127.0.0.3")); err == nil {
		t.Fatal("a fourth connection was served past MaxConns 3")
	}
	if !strings.Contains(logs.String(), "MaxConns: connections in all") {
		t.Errorf("no log line said the total bound refused a connection; logs:\n%s", logs.String())
	}
	s.flushMetrics()
	var refused float64
	for _, iv := range sink.Data() {
		if c, ok := iv.Counters["namecast.rocketmq.connections_refused"]; ok {
			refused += c.Sum
		}
	}
	if refused != 2 {
		t.Errorf("rocketmq.connections_refused = %v, want 2", refused)
	}
	// One from 127.0.0.1 ends: another from there is let in, which is
	// also the room under MaxConns.
	a1.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		return served(dialFrom(t, s, "127.0.0.1"))
	})
	if err := served(a2); err != nil {
		t.Errorf("a connection held all along: %v", err)
	}
}

// The defaults bound a flood, not real use.
func TestConnectionBoundDefaults(t *testing.T) {
	s := startServer(t, newFake())
	if s.cfg.MaxConns != DefaultMaxConns || s.cfg.MaxConnsPerIP != DefaultMaxConnsPerIP {
		t.Errorf("MaxConns %d, MaxConnsPerIP %d; want the defaults %d and %d", s.cfg.MaxConns, s.cfg.MaxConnsPerIP, DefaultMaxConns, DefaultMaxConnsPerIP)
	}
}
