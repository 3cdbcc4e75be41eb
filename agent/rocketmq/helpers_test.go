package rocketmq

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// newFake is one agent without gossip.
func newFake() *hosttest.Fake { return hosttest.Cluster("agent-a")[0] }

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
	doortest.Serve(t, s)
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
