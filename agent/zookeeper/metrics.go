package zookeeper

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// flushEvery is how often counts go to go-metrics (and gauges are set):
// per-request labelled counters would cost allocations on the hot path.
const flushEvery = 2 * time.Second

type opErr struct{ op, err int32 }

type opTotals struct {
	n     uint64
	nanos uint64
	max   uint64
}

// stats counts requests by opcode and error, their latency, and the
// events the door logs, for metrics and the four-letter words.
type stats struct {
	mu      sync.Mutex
	byOpErr map[opErr]uint64
	byOp    map[int32]*opTotals
	flushed map[opErr]uint64

	received, notifications     atomic.Uint64
	expiredConnects, watchLimit atomic.Uint64
	// Sessions expired for losing a conflict (conflicts.go), by the
	// write that lost; flushed as zookeeper.conflicts_lost{op}.
	lostCreate, lostSetData atomic.Uint64
	// Refused requests by kind (refusals.go), under mu; flushed as
	// zookeeper.refused{what}.
	refused, refusedFlushed          map[string]uint64
	latMinNs, latMaxNs, latSum, latN atomic.Uint64
}

func (st *stats) init() {
	st.byOpErr = map[opErr]uint64{}
	st.byOp = map[int32]*opTotals{}
	st.flushed = map[opErr]uint64{}
	st.refused, st.refusedFlushed = map[string]uint64{}, map[string]uint64{}
}

// conflictsLost is the counter of sessions expired for a lost what
// ("create" or "setData").
func (st *stats) countRefused(what string) {
	st.mu.Lock()
	st.refused[what]++
	st.mu.Unlock()
}

func (st *stats) conflictsLost(what string) *atomic.Uint64 {
	if what == "create" {
		return &st.lostCreate
	}
	return &st.lostSetData
}

func (st *stats) count(op, code int32, start time.Time) {
	ns := uint64(time.Since(start))
	st.received.Add(1)
	st.mu.Lock()
	st.byOpErr[opErr{op, code}]++
	t := st.byOp[op]
	if t == nil {
		t = &opTotals{}
		st.byOp[op] = t
	}
	t.n++
	t.nanos += ns
	t.max = max(t.max, ns)
	st.mu.Unlock()
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
	doorkit.Every(s.ctx, flushEvery, func(time.Time) { s.flushMetrics() })
}

// flushMetrics hands counts since the last flush to go-metrics:
// zookeeper.requests{op,err}, zookeeper.latency_ms{op} (mean and max of the
// interval), and the gauges sessions, connections, watches, znodes.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	st := &s.stats
	st.mu.Lock()
	for k, n := range st.byOpErr {
		if d := n - st.flushed[k]; d > 0 {
			m.IncrCounterWithLabels([]string{"zookeeper", "requests"}, float32(d),
				[]metrics.Label{{Name: "op", Value: zkwire.OpName(k.op)}, {Name: "err", Value: zkwire.ErrName(k.err)}})
			st.flushed[k] = n
		}
	}
	for what, n := range st.refused {
		if d := n - st.refusedFlushed[what]; d > 0 {
			m.IncrCounterWithLabels([]string{"zookeeper", "refused"}, float32(d), []metrics.Label{{Name: "what", Value: what}})
			st.refusedFlushed[what] = n
		}
	}
	for op, t := range st.byOp {
		if t.n > 0 {
			l := []metrics.Label{{Name: "op", Value: zkwire.OpName(op)}}
			m.AddSampleWithLabels([]string{"zookeeper", "latency_ms"}, float32(float64(t.nanos)/float64(t.n)/1e6), l)
			m.SetGaugeWithLabels([]string{"zookeeper", "latency_max_ms"}, float32(float64(t.max)/1e6), l)
			*t = opTotals{}
		}
	}
	st.mu.Unlock()
	s.mu.Lock()
	sessions, conns, watches, nodes := len(s.sessions), s.conns.Len(), s.watches.n, len(s.tree.nodes)
	s.mu.Unlock()
	m.SetGauge([]string{"zookeeper", "sessions"}, float32(sessions))
	m.SetGauge([]string{"zookeeper", "connections"}, float32(conns))
	m.SetGauge([]string{"zookeeper", "watches"}, float32(watches))
	m.SetGauge([]string{"zookeeper", "znodes"}, float32(nodes))
	m.IncrCounter([]string{"zookeeper", "notifications"}, float32(st.notifications.Swap(0)))
	for op, n := range map[string]*atomic.Uint64{"create": &st.lostCreate, "setData": &st.lostSetData} {
		if d := n.Swap(0); d > 0 {
			m.IncrCounterWithLabels([]string{"zookeeper", "conflicts_lost"}, float32(d), []metrics.Label{{Name: "op", Value: op}})
		}
	}
}
