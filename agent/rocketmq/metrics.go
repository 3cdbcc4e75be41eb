package rocketmq

import (
	"sync/atomic"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// maxCountedCode covers every code a NameServer knows; others share a slot.
const maxCountedCode = 1024

// requestStats counts requests with one atomic add on the hot path; the
// housekeeping loop hands the totals to go-metrics, whose labelled counters
// cost allocations we do not want per route query.
type requestStats struct {
	byCode      [maxCountedCode + 1]atomic.Uint64
	frameErrors atomic.Uint64
	// refusedConns counts connections refused for a bound (server.go).
	refusedConns atomic.Uint64
	flushed      [maxCountedCode + 1]uint64 // housekeeping goroutine only
	flushedErrs  uint64
	flushedRefs  uint64
}

func (st *requestStats) count(code int) {
	if code < 0 || code >= maxCountedCode {
		code = maxCountedCode
	}
	st.byCode[code].Add(1)
}

func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	st := &s.stats
	for code := range st.byCode {
		n := st.byCode[code].Load()
		if d := n - st.flushed[code]; d > 0 {
			name := "OTHER"
			if code < maxCountedCode {
				name = remoting.RequestName(code)
			}
			m.IncrCounterWithLabels([]string{"rocketmq", "requests"}, float32(d), []metrics.Label{{Name: "code", Value: name}})
			st.flushed[code] = n
		}
	}
	if n := st.frameErrors.Load(); n != st.flushedErrs {
		m.IncrCounter([]string{"rocketmq", "frame_errors"}, float32(n-st.flushedErrs))
		st.flushedErrs = n
	}
	if n := st.refusedConns.Load(); n != st.flushedRefs {
		m.IncrCounter([]string{"rocketmq", "connections_refused"}, float32(n-st.flushedRefs))
		st.flushedRefs = n
	}
	m.SetGauge([]string{"rocketmq", "connections"}, float32(s.conns.Len()))
	m.SetGauge([]string{"rocketmq", "live_brokers"}, float32(s.brokers.len()))
}
