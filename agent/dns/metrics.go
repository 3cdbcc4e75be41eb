package dns

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"
	miekg "github.com/miekg/dns"
)

// flushEvery is how often counts go to go-metrics: labelled counters per
// query would cost allocations on the hot path.
const flushEvery = 2 * time.Second

type typeRcode struct {
	qtype uint16
	rcode int // -1: no reply (not a query)
}

// stats counts queries by type and rcode and their latency.
type stats struct {
	mu       sync.Mutex
	byKind   map[typeRcode]uint64
	flushed  map[typeRcode]uint64
	nanos, n uint64
	max      uint64
	refused  atomic.Uint64
	refFlush uint64
}

func (st *stats) init() {
	st.byKind, st.flushed = map[typeRcode]uint64{}, map[typeRcode]uint64{}
}

func (st *stats) count(qtype uint16, rcode int, start time.Time) {
	d := uint64(time.Since(start))
	st.mu.Lock()
	st.byKind[typeRcode{qtype, rcode}]++
	st.nanos += d
	st.n++
	st.max = max(st.max, d)
	st.mu.Unlock()
}

// flushMetrics hands counts since the last flush to go-metrics:
// dns.queries{type,rcode}, dns.latency_ms (mean and max over the
// interval), dns.refused_connections and the gauge dns.connections.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	st := &s.stats
	st.mu.Lock()
	for k, n := range st.byKind {
		if d := n - st.flushed[k]; d > 0 {
			qtype, rcode := "none", "none" // not a query: no reply
			if k.rcode >= 0 {
				qtype, rcode = miekg.Type(k.qtype).String(), miekg.RcodeToString[k.rcode]
			}
			m.IncrCounterWithLabels([]string{"dns", "queries"}, float32(d),
				[]metrics.Label{{Name: "type", Value: qtype}, {Name: "rcode", Value: rcode}})
			st.flushed[k] = n
		}
	}
	if st.n > 0 {
		m.AddSample([]string{"dns", "latency_ms"}, float32(float64(st.nanos)/float64(st.n)/1e6))
		m.SetGauge([]string{"dns", "latency_max_ms"}, float32(float64(st.max)/1e6))
		st.nanos, st.n, st.max = 0, 0, 0
	}
	if r := st.refused.Load(); r > st.refFlush {
		m.IncrCounter([]string{"dns", "refused_connections"}, float32(r-st.refFlush))
		st.refFlush = r
	}
	st.mu.Unlock()
	m.SetGauge([]string{"dns", "connections"}, float32(s.conns.Len()))
}
