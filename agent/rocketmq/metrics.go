package rocketmq

import (
	"sync/atomic"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// maxCountedCode covers every code a NameServer knows; others share a slot.
const maxCountedCode = 1024

// requestStats counts requests with one atomic add on the hot path, into
// the door's Meter (rocketmq.requests{code}, frame_errors,
// connections_refused); the housekeeping loop flushes it.
type requestStats struct {
	meter       doorkit.Meter
	byCode      [maxCountedCode + 1]atomic.Pointer[atomic.Uint64]
	frameErrors *atomic.Uint64
	// refusedConns counts connections refused for a bound (server.go).
	refusedConns *atomic.Uint64
}

func (st *requestStats) init() {
	st.meter.Name = "rocketmq"
	st.frameErrors = st.meter.Counter("frame_errors")
	st.refusedConns = st.meter.Counter("connections_refused")
}

func (st *requestStats) count(code int) {
	if code < 0 || code >= maxCountedCode {
		code = maxCountedCode
	}
	c := st.byCode[code].Load()
	if c == nil {
		name := "OTHER"
		if code < maxCountedCode {
			name = remoting.RequestName(code)
		}
		c = st.meter.Counter("requests", metrics.Label{Name: "code", Value: name})
		st.byCode[code].Store(c)
	}
	c.Add(1)
}

// flushMetrics hands the counts to go-metrics and sets the gauges
// rocketmq.connections and live_brokers.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	s.stats.meter.Flush(m)
	m.SetGauge([]string{"rocketmq", "connections"}, float32(s.conns.Len()))
	m.SetGauge([]string{"rocketmq", "live_brokers"}, float32(s.brokers.len()))
}
