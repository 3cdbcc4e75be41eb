package prometheusconsul_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/discovery/consul"
	"github.com/prometheus/prometheus/discovery/targetgroup"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// targets is what Prometheus' discovery last sent, by source (service).
type targets struct {
	mu     sync.Mutex
	groups map[string][]model.LabelSet
}

func (ts *targets) follow(ctx context.Context, ch <-chan []*targetgroup.Group) {
	for {
		var tgs []*targetgroup.Group
		select {
		case <-ctx.Done():
			return
		case tgs = <-ch:
		}
		ts.mu.Lock()
		for _, tg := range tgs {
			if tg == nil || tg.Source == "" {
				continue
			}
			var sets []model.LabelSet
			for _, t := range tg.Targets {
				sets = append(sets, t.Merge(tg.Labels))
			}
			ts.groups[tg.Source] = sets
		}
		ts.mu.Unlock()
	}
}

// of is the service's targets' addresses and the label named label of
// each, "addr label", sorted.
func (ts *targets) of(service string, label model.LabelName) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []string
	for _, t := range ts.groups[service] {
		out = append(out, string(t[model.AddressLabel])+" "+string(t[label]))
	}
	slices.Sort(out)
	return out
}

// startSD runs Prometheus' Consul discovery against the Consul door at
// addr until t ends.
func startSD(t *testing.T, addr string) *targets {
	t.Helper()
	cfg := consul.DefaultSDConfig
	cfg.Server = addr
	cfg.RefreshInterval = model.Duration(time.Second)
	reg := prometheus.NewRegistry()
	m := cfg.NewDiscovererMetrics(reg, discovery.NewRefreshMetrics(reg))
	if err := m.Register(); err != nil {
		t.Fatal(err)
	}
	d, err := consul.NewDiscovery(&cfg, nil, m)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan []*targetgroup.Group)
	ts := &targets{groups: map[string][]model.LabelSet{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.Run(ctx, ch) }()
	go func() { defer wg.Done(); ts.follow(ctx, ch) }()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return ts
}

func call(t *testing.T, method, addr, path string, body any) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
}

func broker(name, addr string) map[string]any {
	return map[string]any{"cluster": "DefaultCluster", "brokerName": name, "brokerId": 0, "addr": addr,
		"topics": map[string]any{"PromTopic": map[string]int{"readQueueNums": 4, "writeQueueNums": 4, "perm": 6}}}
}

func eventually(t *testing.T, what string, got func() []string, want ...string) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, func() error {
		if g := got(); !slices.Equal(g, want) {
			return fmt.Errorf("%s: %q, want %q", what, g, want)
		}
		return nil
	})
}

// Brokers registered on one agent are Prometheus' targets through another
// agent's Consul door, with Consul's labels; a broker added or gone is
// followed.
func TestPrometheusFindsAndFollowsBrokers(t *testing.T) {
	c := agenttest.Start(t, 2)
	ts := startSD(t, c.Agent(1).Addr("consul"))
	a0 := c.Agent(0).HTTPAddr()
	call(t, "PUT", a0, "/v1/brokers", broker("b1", "10.9.0.1:10911"))
	nodes := func() []string { return ts.of("rocketmq-broker", "__meta_consul_node") }
	eventually(t, "targets", nodes, "10.9.0.1:10911 agent-0")
	labels := func() []string {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		var out []string
		for _, t := range ts.groups["rocketmq-broker"] {
			for _, l := range []model.LabelName{"__meta_consul_service", "__meta_consul_dc", "__meta_consul_tags", "__meta_consul_health",
				"__meta_consul_service_metadata_rocketmq_role", "__meta_consul_service_id"} {
				out = append(out, string(l)+"="+string(t[l]))
			}
		}
		return out
	}
	eventually(t, "labels", labels, "__meta_consul_service=rocketmq-broker", "__meta_consul_dc=dc1",
		"__meta_consul_tags=,cluster=DefaultCluster,broker=b1,id=0,master,", "__meta_consul_health=passing",
		"__meta_consul_service_metadata_rocketmq_role=master", "__meta_consul_service_id=rocketmq-broker:b1:0")
	call(t, "PUT", c.Agent(1).HTTPAddr(), "/v1/brokers", broker("b2", "10.9.0.2:10911"))
	eventually(t, "a broker added", nodes, "10.9.0.1:10911 agent-0", "10.9.0.2:10911 agent-1")
	call(t, "DELETE", a0, "/v1/brokers/DefaultCluster/b1/0", nil)
	eventually(t, "a broker gone", nodes, "10.9.0.2:10911 agent-1")
}

// A service registered through the Consul door with a TTL check is a
// target everywhere, and its health follows the check as the holder runs
// it: critical on another agent once the TTL is failed.
func TestPrometheusSeesCheckStatus(t *testing.T) {
	c := agenttest.Start(t, 2)
	ts := startSD(t, c.Agent(1).Addr("consul"))
	a0 := c.Agent(0).Addr("consul")
	call(t, "PUT", a0, "/v1/agent/service/register", map[string]any{"Name": "web", "ID": "web-1", "Address": "10.9.1.1", "Port": 8080,
		"Tags": []string{"v1"}, "Check": map[string]any{"CheckID": "web-ttl", "TTL": "30s"}})
	health := func() []string { return ts.of("web", "__meta_consul_health") }
	eventually(t, "registered, TTL not yet passed", health, "10.9.1.1:8080 critical")
	call(t, "PUT", a0, "/v1/agent/check/pass/web-ttl", nil)
	eventually(t, "TTL passed", health, "10.9.1.1:8080 passing")
	call(t, "PUT", a0, "/v1/agent/check/fail/web-ttl?note="+strings.ReplaceAll("down for test", " ", "+"), nil)
	eventually(t, "TTL failed", health, "10.9.1.1:8080 critical")
	call(t, "PUT", a0, "/v1/agent/service/deregister/web-1", nil)
	eventually(t, "deregistered", health)
}
