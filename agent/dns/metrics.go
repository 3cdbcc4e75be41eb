package dns

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"
	miekg "github.com/miekg/dns"

	"github.com/namecast/namecast/agent/doorkit"
)

// stats counts queries by type and rcode (dns.queries{type,rcode}), their
// latency (dns.latency_ms, latency_max_ms) and the TCP connections
// refused (dns.refused_connections) in the door's Meter.
type stats struct {
	meter   doorkit.Meter
	refused *atomic.Uint64
}

func (st *stats) init() {
	st.meter.Name = "dns"
	st.refused = st.meter.Counter("refused_connections")
}

// count counts one query of qtype answered with rcode (-1: not a query,
// no reply) that began at start.
func (st *stats) count(qtype uint16, rcode int, start time.Time) {
	qt, rc := "none", "none"
	if rcode >= 0 {
		qt, rc = miekg.Type(qtype).String(), miekg.RcodeToString[rcode]
	}
	st.meter.Add(1, "queries", metrics.Label{Name: "type", Value: qt}, metrics.Label{Name: "rcode", Value: rc})
	st.meter.Observe(time.Since(start), "latency")
}

// flushMetrics hands the counts to go-metrics and sets the gauge
// dns.connections.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	s.stats.meter.Flush(m)
	m.SetGauge([]string{"dns", "connections"}, float32(s.conns.Len()))
}
