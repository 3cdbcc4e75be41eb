package agent

import (
	"net/http"
	"sync"

	"github.com/hashicorp/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/namecast/namecast/internal/buildinfo"
	"github.com/namecast/namecast/internal/promsink"
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

// startMetrics gives the agent its own registry and go-metrics instance, so
// several agents in one process (tests, benchmarks) report separately.
func (a *Agent) startMetrics() error {
	installGlobalMetrics()
	a.prom = prometheus.NewRegistry()
	sink := promsink.New()
	if err := a.prom.Register(sink); err != nil {
		return err
	}
	if err := a.prom.Register(promsink.BuildInfo(a.cfg.version(), buildinfo.Revision(), buildinfo.GoVersion())); err != nil {
		return err
	}
	cfg := metrics.DefaultConfig("namecast")
	cfg.EnableHostname = false
	cfg.EnableRuntimeMetrics = false
	var err error
	a.metrics, err = metrics.New(cfg, sink)
	return err
}

// metricsHandler serves GET /metrics in Prometheus' text format, on the
// HTTP door and on the --metrics listener.
func (a *Agent) metricsHandler() http.Handler {
	h := promhttp.HandlerFor(prometheus.Gatherers{a.prom, globalProm}, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origins, records := a.table.Len()
		a.metrics.SetGauge([]string{"routes", "origins"}, float32(origins))
		a.metrics.SetGauge([]string{"routes", "records"}, float32(records))
		a.metrics.SetGauge([]string{"gossip", "members"}, float32(a.gossip.AliveMembers()))
		a.metrics.SetGauge([]string{"gossip", "queued"}, float32(a.gossip.QueuedBroadcasts()))
		h.ServeHTTP(w, r)
	})
}
