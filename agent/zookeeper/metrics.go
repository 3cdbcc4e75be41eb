package zookeeper

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// stats counts requests and the events the door logs: into the door's
// Meter for metrics (zookeeper.requests{op,err}, latency{op},
// refused{what}, notifications, conflicts_lost{op}), and in atomics for
// the four-letter words.
type stats struct {
	meter         doorkit.Meter
	notifications *atomic.Uint64

	received                         atomic.Uint64
	expiredConnects, watchLimit      atomic.Uint64
	latMinNs, latMaxNs, latSum, latN atomic.Uint64
}

func (st *stats) init() {
	st.meter.Name = "zookeeper"
	st.notifications = st.meter.Counter("notifications")
}

// countRefused counts a request refused for what (refusals.go).
func (st *stats) countRefused(what string) {
	st.meter.Add(1, "refused", metrics.Label{Name: "what", Value: what})
}

// conflictsLost is the counter of sessions expired for a lost what
// ("create" or "setData", conflicts.go).
func (st *stats) conflictsLost(what string) *atomic.Uint64 {
	return st.meter.Counter("conflicts_lost", metrics.Label{Name: "op", Value: what})
}

func (st *stats) count(op, code int32, start time.Time) {
	d := time.Since(start)
	ns := uint64(d)
	st.received.Add(1)
	opName := metrics.Label{Name: "op", Value: zkwire.OpName(op)}
	st.meter.Add(1, "requests", opName, metrics.Label{Name: "err", Value: zkwire.ErrName(code)})
	st.meter.Observe(d, "latency", opName)
	st.latSum.Add(ns)
	st.latN.Add(1)
	for {
		m := st.latMaxNs.Load()
		if ns <= m || st.latMaxNs.CompareAndSwap(m, ns) {
			break
		}
	}
	for {
		m := st.latMinNs.Load()
		if (m != 0 && ns >= m) || st.latMinNs.CompareAndSwap(m, ns) {
			break
		}
	}
}

func (s *Server) housekeepingLoop() {
	doorkit.Every(s.ctx, doorkit.FlushEvery, func(time.Time) { s.flushMetrics() })
}

// flushMetrics hands the counts to go-metrics and sets the gauges
// sessions, connections, watches, znodes.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	s.stats.meter.Flush(m)
	s.mu.Lock()
	sessions, conns, watches, nodes := len(s.sessions), s.conns.Len(), s.watches.n, len(s.tree.nodes)
	s.mu.Unlock()
	m.SetGauge([]string{"zookeeper", "sessions"}, float32(sessions))
	m.SetGauge([]string{"zookeeper", "connections"}, float32(conns))
	m.SetGauge([]string{"zookeeper", "watches"}, float32(watches))
	m.SetGauge([]string{"zookeeper", "znodes"}, float32(nodes))
}
