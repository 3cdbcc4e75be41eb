package agent

import (
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// memberlist emits into go-metrics' process-global sink; there is one per
// process whatever the number of agents, so it is installed once and every
// agent's /metrics serves it beside the agent's own registry.
var (
	globalOnce sync.Once
	globalProm = prometheus.NewRegistry()
)

func installGlobalMetrics() {
	globalOnce.Do(func() {
		sink, err := promsink.NewPrometheusSinkFrom(promsink.PrometheusOpts{Registerer: globalProm, Expiration: time.Hour})
		if err != nil {
			return
		}
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
	sink, err := promsink.NewPrometheusSinkFrom(promsink.PrometheusOpts{Registerer: a.prom, Expiration: time.Hour})
	if err != nil {
		return err
	}
	cfg := metrics.DefaultConfig("namecast")
	cfg.EnableHostname = false
	cfg.EnableRuntimeMetrics = false
	a.metrics, err = metrics.New(cfg, sink)
	return err
}

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
