package promsink

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The naming rules of the package comment, one case each.
func TestName(t *testing.T) {
	for _, tt := range []struct {
		k     kind
		parts []string
		want  string
		scale float64
	}{
		{counter, []string{"namecast", "gossip", "ops", "applied"}, "namecast_gossip_ops_applied_total", 1},
		{counter, []string{"namecast", "x", "done_total"}, "namecast_x_done_total", 1},
		{gauge, []string{"namecast", "zookeeper", "sessions"}, "namecast_zookeeper_sessions", 1},
		{summary, []string{"namecast", "zookeeper", "latency_ms"}, "namecast_zookeeper_latency_seconds", 1e-3},
		{gauge, []string{"namecast", "zookeeper", "latency_max_ms"}, "namecast_zookeeper_latency_max_seconds", 1e-3},
		{summary, []string{"namecast", "memberlist", "probeNode"}, "namecast_memberlist_probe_node_seconds", 1e-3},
		{summary, []string{"namecast", "http", "get"}, "namecast_http_get_seconds", 1e-3},
		{counter, []string{"namecast", "memberlist", "udp", "sent"}, "namecast_memberlist_udp_sent_bytes_total", 1},
		{summary, []string{"namecast", "memberlist", "size", "remote"}, "namecast_memberlist_size_remote_bytes", 1},
		{summary, []string{"namecast", "memberlist", "queue", "broadcasts"}, "namecast_memberlist_queue_broadcasts", 1},
		{counter, []string{"namecast", "odd-name", "a.b"}, "namecast_odd_name_a_b_total", 1},
	} {
		name, scale := Name(tt.k, tt.parts)
		if name != tt.want || scale != tt.scale {
			t.Errorf("Name(%v, %q) = %s, %g; want %s, %g", tt.k, tt.parts, name, scale, tt.want, tt.scale)
		}
	}
}

// Every HELP text describes its series: none is the bare name, and the
// table names only series the rules can produce (a key under "_total" for
// a counter, base units).
func TestHelp(t *testing.T) {
	for name, help := range helps {
		if help == "" || help == name || !strings.HasSuffix(help, ".") {
			t.Errorf("%s: HELP %q; want a sentence", name, help)
		}
		if strings.HasSuffix(name, "_ms") || strings.Contains(name, "_ms_") {
			t.Errorf("%s: not in base units (seconds)", name)
		}
	}
	if h := defaultHelp(counter, []string{"namecast", "door", "new_thing"}); h != "Count of namecast door new thing (go-metrics key namecast.door.new_thing)." {
		t.Errorf("defaultHelp = %q", h)
	}
}

// A Sink serves what go-metrics emits under the converted names, labels
// in order, timers in seconds.
func TestSinkServesConvertedSeries(t *testing.T) {
	s := New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	cfg := metrics.DefaultConfig("namecast")
	cfg.EnableHostname, cfg.EnableRuntimeMetrics = false, false
	m, err := metrics.New(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	m.IncrCounterWithLabels([]string{"zookeeper", "requests"}, 2, []metrics.Label{{Name: "op", Value: "getData"}, {Name: "err", Value: "ok"}})
	m.IncrCounterWithLabels([]string{"zookeeper", "requests"}, 1, []metrics.Label{{Name: "op", Value: "getData"}, {Name: "err", Value: "ok"}})
	m.SetGauge([]string{"zookeeper", "sessions"}, 4)
	m.AddSample([]string{"zookeeper", "latency_ms"}, 250)
	want := `# HELP namecast_zookeeper_latency_seconds Mean time to answer a ZooKeeper request over each flush interval, by operation.
# TYPE namecast_zookeeper_latency_seconds summary
namecast_zookeeper_latency_seconds{quantile="0.5"} 0.25
namecast_zookeeper_latency_seconds{quantile="0.9"} 0.25
namecast_zookeeper_latency_seconds{quantile="0.99"} 0.25
namecast_zookeeper_latency_seconds_sum 0.25
namecast_zookeeper_latency_seconds_count 1
# HELP namecast_zookeeper_requests_total ZooKeeper requests, by operation and error code.
# TYPE namecast_zookeeper_requests_total counter
namecast_zookeeper_requests_total{err="ok",op="getData"} 3
# HELP namecast_zookeeper_sessions Live ZooKeeper sessions.
# TYPE namecast_zookeeper_sessions gauge
namecast_zookeeper_sessions 4
`
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if got := rec.Body.String(); got != want {
		t.Errorf("served:\n%s\nwant:\n%s", got, want)
	}
}
