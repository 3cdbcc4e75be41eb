package agent_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/listener"
)

// The agent binds its doors' listeners through Config.Listen, so a test
// can serve every door in memory: a URL registered over the HTTP door so
// served is read back through it, and each door reports the listener's
// address.
func TestDoorsServeOnListenersTheAgentIsGiven(t *testing.T) {
	var mu sync.Mutex
	lns := map[string]*listener.Memory{}
	c := agenttest.Start(t, 1, func(cfg *agent.Config) {
		cfg.RocketMQAddr, cfg.ZooKeeperAddr = "127.0.0.1:0", "127.0.0.1:0"
		cfg.Listen = func(door, addr string) (net.Listener, error) {
			mu.Lock()
			defer mu.Unlock()
			ln := listener.NewMemory(door)
			lns[door] = ln
			return ln, nil
		}
	})
	a := c.Agent(0)
	for door, got := range map[string]string{"http": a.HTTPAddr(), "rocketmq": a.Addr("rocketmq"), "zookeeper": a.Addr("zookeeper")} {
		if want := "mem:" + door; got != want {
			t.Errorf("the %s door serves on %q, want the listener it was given, %q", door, got, want)
		}
	}
	mu.Lock()
	httpLn := lns["http"]
	mu.Unlock()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return httpLn.Dial(ctx) }}}
	defer client.CloseIdleConnections()
	const u = "dubbo://10.0.0.1:20880/com.example.InMemory?version=1"
	req, _ := http.NewRequest("PUT", "http://localhost/v1/urls", strings.NewReader(`{"url":"`+u+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if status, body := do(t, client, req); status != http.StatusOK {
		t.Fatalf("PUT /v1/urls in memory: %d %s", status, body)
	}
	req, _ = http.NewRequest("GET", "http://localhost/v1/services/com.example.InMemory", nil)
	if status, body := do(t, client, req); status != http.StatusOK || !bytes.Contains(body, []byte("10.0.0.1:20880")) {
		t.Fatalf("GET the service in memory: %d %s", status, body)
	}
}

func do(t *testing.T, client *http.Client, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// A crashed agent comes back on every door listener it had (the same host
// coming back), Nacos' two included: clients reconnect where they were.
func TestRestartKeepsEveryDoorAddress(t *testing.T) {
	c := agenttest.Start(t, 1)
	before := c.Agent(0).Doors()
	names := map[string]bool{}
	for _, d := range before {
		names[d.Name] = true
	}
	for _, want := range []string{"http", "rocketmq", "zookeeper", "nacos", "nacos-grpc", "consul", "dns", "dns-udp"} {
		if !names[want] {
			t.Fatalf("the agent serves %v, want a %s listener among them", before, want)
		}
	}
	after := c.Restart(0).Doors()
	if !slices.Equal(before, after) {
		t.Errorf("restarted on %v, want where it was, %v", after, before)
	}
}
