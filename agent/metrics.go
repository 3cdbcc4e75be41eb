package agent

import (
	"net/http"
	"sync"

	"github.com/hashicorp/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/buildinfo"
	"github.com/namecast/namecast/internal/promsink"
	"github.com/namecast/namecast/routes"
)

// memberlist emits into go-metrics' process-global sink; there is one per
// process whatever the number of agents, so it is installed once, with the
// Go runtime's and the process's collectors (go_*, process_*), and every
// agent's /metrics serves it beside the agent's own registry. Every series
// is named by package promsink.
var (
	globalOnce sync.Once
	globalProm = prometheus.NewRegistry()
)

func installGlobalMetrics() {
	globalOnce.Do(func() {
		sink := promsink.New()
		globalProm.MustRegister(sink, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		cfg := metrics.DefaultConfig("namecast")
		cfg.EnableHostname = false
		cfg.EnableRuntimeMetrics = false
		_, _ = metrics.NewGlobal(cfg, sink)
	})
}

// newMetrics is an agent's own registry and go-metrics instance, so
// several agents in one process (tests, benchmarks) report separately;
// version is the agent's, for namecast_build_info.
func newMetrics(version string) (*prometheus.Registry, *metrics.Metrics, error) {
	installGlobalMetrics()
	prom := prometheus.NewRegistry()
	sink := promsink.New()
	if err := prom.Register(sink); err != nil {
		return nil, nil, err
	}
	if err := prom.Register(promsink.BuildInfo(version, buildinfo.Revision(), buildinfo.GoVersion())); err != nil {
		return nil, nil, err
	}
	cfg := metrics.DefaultConfig("namecast")
	cfg.EnableHostname = false
	cfg.EnableRuntimeMetrics = false
	m, err := metrics.New(cfg, sink)
	return prom, m, err
}

// metricsHandler serves GET /metrics in Prometheus' text format, on the
// HTTP door and on the --metrics listener: prom's series, the process's,
// and the table's and gossip's gauges of the moment, set in m.
func metricsHandler(prom *prometheus.Registry, m *metrics.Metrics, table *routes.Table, g *gossip.Gossip) http.Handler {
	h := promhttp.HandlerFor(prometheus.Gatherers{prom, globalProm}, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origins, records := table.Len()
		m.SetGauge([]string{"routes", "origins"}, float32(origins))
		m.SetGauge([]string{"routes", "records"}, float32(records))
		m.SetGauge([]string{"gossip", "members"}, float32(g.AliveMembers()))
		m.SetGauge([]string{"gossip", "queued"}, float32(g.QueuedBroadcasts()))
		h.ServeHTTP(w, r)
	})
}
