package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

type consulEntry struct {
	Node    struct{ Node string }
	Service struct {
		ID      string
		Service string
		Tags    []string
		Meta    map[string]string
		Port    int
	}
	Checks []struct{ CheckID, Status string }
}

// One registry through the Consul door: a service registered on agent 0's
// Consul port answers a blocking health query on agent 1, is an
// application the HTTP API lists there, and goes with agent 0; a Dubbo
// provider registered over HTTP is a Consul service tagged dubbo with its
// URL in Meta, as Dubbo's own Consul registry reads it.
func TestConsulDoorAcrossAgents(t *testing.T) {
	c := agenttest.Start(t, 2)
	a0, a1 := c.Agent(0).Addr("consul"), c.Agent(1).Addr("consul")
	if a0 == "" || a1 == "" {
		t.Fatalf("Consul door addresses %q %q", a0, a1)
	}
	var entries []consulEntry
	_, h := call(t, "GET", a1, "/v1/health/service/web", nil, &entries)
	index := h.Get("X-Consul-Index")
	got := make(chan []consulEntry, 1)
	go func() {
		var es []consulEntry
		call(t, "GET", a1, "/v1/health/service/web?passing&index="+index+"&wait=30s", nil, &es)
		got <- es
	}()
	reg := map[string]any{"ID": "web-1", "Name": "web", "Port": 8080, "Tags": []string{"v1"},
		"Check": map[string]any{"TTL": "30s", "Status": "passing"}}
	if code, _ := call(t, "PUT", a0, "/v1/agent/service/register", reg, nil); code != http.StatusOK {
		t.Fatalf("register: %d", code)
	}
	select {
	case es := <-got:
		if len(es) != 1 || es[0].Service.ID != "web-1" || es[0].Node.Node != c.Name(0) {
			t.Fatalf("blocking query on agent 1: %+v", es)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking health query on agent 1 not answered within 20s of the registration on agent 0")
	}
	var app struct{ Instances []struct{ Agent string } }
	if code, _ := call(t, "GET", c.Agent(1).HTTPAddr(), "/v1/apps/web", nil, &app); code != 200 || len(app.Instances) != 1 || app.Instances[0].Agent != c.Name(0) {
		t.Fatalf("the HTTP API on agent 1 does not list the Consul registration: %d %+v", code, app)
	}

	provider := "dubbo://10.0.0.5:20880/org.demo.Greeter?application=shop&side=provider"
	if code, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/urls", map[string]string{"url": provider}, nil); code != 200 {
		t.Fatalf("HTTP register: %d", code)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		var es []consulEntry
		call(t, "GET", a1, "/v1/health/service/org.demo.Greeter?tag=dubbo&passing=true", nil, &es)
		if len(es) != 1 || es[0].Service.Meta["url"] != provider || es[0].Service.Port != 20880 {
			return fmt.Errorf("Dubbo provider as Consul service on agent 1: %+v", es)
		}
		return nil
	})

	c.Crash(0)
	testutil.Eventually(t, 30*time.Second, func() error {
		var es []consulEntry
		call(t, "GET", a1, "/v1/health/service/web", nil, &es)
		if len(es) != 0 {
			return fmt.Errorf("agent 1 still lists %+v after agent 0 died", es)
		}
		return nil
	})
}

// --consul off starts no listener; a taken port names the flag.
func TestConsulDoorOff(t *testing.T) {
	off := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.ConsulAddr = "off" })
	if got := off.Agent(0).Addr("consul"); got != "" {
		t.Fatalf(`consul address with "off" = %q`, got)
	}
}

// With --data-dir a registration made through the Consul door comes back
// after the agent's restart, its TTL check taking updates again, as a
// Consul agent restores the services registered through its API.
func TestConsulRegistrationSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.DataDir = dir })
	reg := map[string]any{"ID": "web-1", "Name": "web", "Port": 8080, "Check": map[string]any{"CheckID": "hb", "TTL": "5m"}}
	if code, _ := call(t, "PUT", c.Agent(0).Addr("consul"), "/v1/agent/service/register", reg, nil); code != http.StatusOK {
		t.Fatalf("register: %d", code)
	}
	if code, _ := call(t, "PUT", c.Agent(0).Addr("consul"), "/v1/agent/check/pass/hb", nil, nil); code != http.StatusOK {
		t.Fatalf("pass: %d", code)
	}
	a := c.Restart(0)
	var entries []consulEntry
	if code, _ := call(t, "GET", a.Addr("consul"), "/v1/health/service/web?passing", nil, &entries); code != 200 || len(entries) != 1 || entries[0].Service.ID != "web-1" {
		t.Fatalf("after the restart: %d %+v", code, entries)
	}
	if code, _ := call(t, "PUT", a.Addr("consul"), "/v1/agent/check/fail/hb", nil, nil); code != http.StatusOK {
		t.Fatalf("fail after the restart: %d (the check was not restored)", code)
	}
	if code, _ := call(t, "PUT", a.Addr("consul"), "/v1/agent/service/deregister/web-1", nil, nil); code != http.StatusOK {
		t.Fatalf("deregister after the restart: %d", code)
	}
	a = c.Restart(0)
	if code, _ := call(t, "GET", a.Addr("consul"), "/v1/health/service/web", nil, &entries); code != 200 || len(entries) != 0 {
		t.Fatalf("a deregistered service came back with the restart: %+v", entries)
	}
}

// A Dubbo provider registering through Dubbo's Consul registry on agent 0
// is a provider URL agent 1's other doors serve (here its HTTP API, as a
// ZooKeeper or Nacos consumer would see it) while its check passes.
func TestDubboConsulProviderServedByOtherDoors(t *testing.T) {
	c := agenttest.Start(t, 2)
	url := "dubbo://127.0.0.1:20880/org.demo.Greeter?side=provider&version=1.0"
	reg := map[string]any{"ID": "p1", "Name": "org.demo.Greeter", "Address": "127.0.0.1", "Port": 20880, "Tags": []string{"dubbo"},
		"Meta": map[string]string{"url": url}, "Check": map[string]any{"CheckID": "p1-ttl", "TTL": "1m", "Status": "passing"}}
	if code, _ := call(t, "PUT", c.Agent(0).Addr("consul"), "/v1/agent/service/register", reg, nil); code != http.StatusOK {
		t.Fatalf("register: %d", code)
	}
	providers := func(want int) error {
		var res struct{ URLs []string }
		call(t, "GET", c.Agent(1).HTTPAddr(), "/v1/services/org.demo.Greeter", nil, &res)
		if len(res.URLs) != want {
			return fmt.Errorf("agent 1's HTTP API lists %v, want %d URL(s)", res.URLs, want)
		}
		return nil
	}
	testutil.Eventually(t, 20*time.Second, func() error { return providers(1) })
	if code, _ := call(t, "PUT", c.Agent(0).Addr("consul"), "/v1/agent/check/fail/p1-ttl", nil, nil); code != http.StatusOK {
		t.Fatalf("fail: %d", code)
	}
	testutil.Eventually(t, 20*time.Second, func() error { return providers(0) })
}
