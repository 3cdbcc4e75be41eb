package rocketmq

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/internal/testutil"
)

func TestUnknownCode(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake())
	c := dial(t, s)
	wantCode(t, do(t, c, 999, nil, nil), remoting.RequestCodeNotSupported, " request type 999 not supported")
	// Controller codes are not served either.
	wantCode(t, do(t, c, 1001, nil, nil), remoting.RequestCodeNotSupported, " request type 1001 not supported")
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("connection not closed after %s", what)
	}
}

// The cap is checked on the length prefix, before anything is allocated or
// read: the server closes without waiting for the announced bytes.
func TestFrameCap(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake(), func(c *Config) { c.MaxFrame = 1024 })
	c := dial(t, s)
	var prefix [8]byte
	binary.BigEndian.PutUint32(prefix[:], 2000)
	binary.BigEndian.PutUint32(prefix[4:], 10)
	if err := c.WriteRaw(prefix[:]); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c.Closed(), "an oversized frame")
	// A frame just under the cap is fine.
	c2 := dial(t, s)
	resp := do(t, c2, remoting.GetKVConfig, map[string]string{"namespace": "ns", "key": strings.Repeat("k", 800)}, nil)
	wantCode(t, resp, remoting.QueryNotFound, "")
}

func TestGarbageClosesConnection(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake())
	for name, junk := range map[string][]byte{
		"http":               []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"bad serialize type": {0, 0, 0, 8, 7, 0, 0, 2, '{', '}'},
		"header past frame":  {0, 0, 0, 6, 0, 0, 0, 9, '{', '}'},
		"bad json header":    {0, 0, 0, 7, 0, 0, 0, 3, '{', 'x', '}'},
		"short length":       {0, 0, 0, 2, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, s)
			if err := c.WriteRaw(junk); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, c.Closed(), name)
		})
	}
	// The server still serves others.
	wantCode(t, do(t, dial(t, s), 999, nil, nil), remoting.RequestCodeNotSupported, "")
}

func TestIdleTimeout(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake(), func(c *Config) { c.IdleTimeout = 50 * time.Millisecond })
	c := dial(t, s)
	wantCode(t, do(t, c, 999, nil, nil), remoting.RequestCodeNotSupported, "")
	waitClosed(t, c.Closed(), "the idle timeout")
}

// Oneway requests are processed and never answered: the first answer on
// the connection is the two-way request's that followed them.
func TestOneway(t *testing.T) {
	testutil.CheckLeaks(t)
	reg := newFake()
	s := startServer(t, reg)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var out []byte
	for i, code := range []int{remoting.GetRouteInfoByTopic, 999, remoting.PutKVConfig, remoting.GetKVConfig} {
		req := remoting.NewRequest(code, map[string]string{"topic": "T", "namespace": "ns", "key": "k", "value": "v"}, nil)
		req.Opaque = int32(i + 1)
		if code != remoting.GetKVConfig {
			req.Flag = remoting.FlagOneway
		}
		out, _ = remoting.AppendFrame(out, req)
	}
	if _, err := nc.Write(out); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := remoting.NewDecoder(nc, 0).Decode()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Opaque != 4 {
		t.Fatalf("first answer is to opaque %d, a oneway request: %v", resp.Opaque, resp)
	}
	// The oneway put ran (on the worker, so possibly after the get).
	testutil.Eventually(t, 5*time.Second, func() error {
		if v := reg.Routes.KVs("ns")["k"]; v != "v" {
			return fmt.Errorf("oneway put not applied: %q", v)
		}
		return nil
	})
}

// Requests are pipelined and answered by opaque. A registration held up in
// the worker does not hold up route queries behind it, whose answers then
// overtake it.
func TestPipeliningOutOfOrder(t *testing.T) {
	testutil.CheckLeaks(t)
	reg := newFake()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	s := startServer(t, reg)
	c := dial(t, s)
	register(t, c, brokerA())
	hold := func() {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	}
	reg.BeforeApply.Store(&hold)
	req, _ := brokerA().RegisterRequest()
	_, slow, err := c.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	var fast []<-chan *remoting.Command
	for i := 0; i < 50; i++ {
		q := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": "TopicTest"}, nil)
		_, ch, err := c.Send(q)
		if err != nil {
			t.Fatal(err)
		}
		fast = append(fast, ch)
	}
	for i, ch := range fast {
		select {
		case resp := <-ch:
			wantCode(t, resp, remoting.Success, "")
		case <-time.After(5 * time.Second):
			t.Fatalf("route query %d waited behind a registration", i)
		}
	}
	select {
	case <-slow:
		t.Fatal("the held registration answered early")
	default:
	}
	close(release)
	wantCode(t, <-slow, remoting.Success, "")
	reg.BeforeApply.Store(nil)
}

// Java's ROCKETMQ binary header is understood; the answer is JSON.
func TestBinaryHeaderRequest(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	register(t, c, brokerA())
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": "TopicTest"}, nil)
	req.SerializeType = remoting.SerializeRocketMQ
	req.Version = remoting.VersionGoClient
	_, ch, err := c.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := <-ch
	if resp.Code != remoting.Success || resp.SerializeType != remoting.SerializeJSON || !strings.Contains(string(resp.Body), `{0:"10.0.0.1:10911"}`) {
		t.Fatalf("got %v %s", resp, resp.Body)
	}
}

func TestLifecycle(t *testing.T) {
	testutil.CheckLeaks(t)
	if _, err := NewServer(Config{}); err == nil {
		t.Error("no registry accepted")
	}
	s := startServer(t, newFake())
	c := dial(t, s)
	// A taken port is the agent's to report, with its advice: it binds
	// every door's listener (TestZooKeeperPortTaken in package agent).
	// Close keeps registrations (the agent goes away with them) and is
	// idempotent.
	reg := newFake()
	s3 := startServer(t, reg)
	register(t, dial(t, s3), brokerA())
	if err := s3.Close(); err != nil {
		t.Error(err)
	}
	if err := s3.Close(); err != nil {
		t.Error(err)
	}
	if _, ok := reg.Routes.TopicRoute("TopicTest"); !ok {
		t.Error("Close unregistered the brokers")
	}
	if _, err := net.DialTimeout("tcp", s3.Addr(), time.Second); err == nil {
		t.Error("closed server still accepts")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := s3.Serve(ln); err == nil {
		t.Error("a closed server started again")
	}
	s.Close()
	waitClosed(t, c.Closed(), "Close")
}

func TestMetrics(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	mc := metrics.DefaultConfig("namecast")
	mc.EnableHostname, mc.EnableRuntimeMetrics = false, false
	m, err := metrics.New(mc, sink)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, newFake(), func(c *Config) { c.Metrics = m; c.ScanInterval = time.Hour })
	c := dial(t, s)
	register(t, c, brokerA())
	route(t, c, "TopicTest")
	route(t, c, "TopicTest")
	s.flushMetrics()
	got := map[string]float32{}
	for _, iv := range sink.Data() {
		for k, v := range iv.Counters {
			got[k] = float32(v.Sum)
		}
		for k, v := range iv.Gauges {
			got[k] = v.Value
		}
	}
	for k, want := range map[string]float32{
		"namecast.rocketmq.requests;code=GET_ROUTEINFO_BY_TOPIC": 2,
		"namecast.rocketmq.requests;code=REGISTER_BROKER":        1,
		"namecast.rocketmq.live_brokers":                         1,
		"namecast.rocketmq.connections":                          1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], want, got)
		}
	}
}
