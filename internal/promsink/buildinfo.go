package promsink

import "github.com/prometheus/client_golang/prometheus"

// BuildInfo is namecast_build_info{version,revision,goversion} 1, the
// conventional series that says which build is running.
func BuildInfo(version, revision, goVersion string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "namecast_build_info",
		Help:        "The build of namecast that is running: its version, VCS revision and Go release; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goVersion},
	})
	g.Set(1)
	return g
}
