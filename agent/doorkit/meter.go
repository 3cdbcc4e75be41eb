package doorkit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"
)

// FlushEvery is how often a door hands its counts to go-metrics (Meter.Run).
const FlushEvery = 2 * time.Second

// A Meter counts a door's events as they happen, cheaply (an atomic add, or
// a map entry under a lock), and hands what was counted since the last
// flush to go-metrics in one go: go-metrics' labelled counters cost
// allocations a door does not want per request. Every door's counters go
// to go-metrics this one way.
//
//   - Counter is a counter's cell, made on first use, for a hot path to
//     keep and Add to without a lock; Add counts by name and labels.
//   - Observe times one request; a flush gives the interval's mean as a
//     sample (SERIES_ms) and its maximum as a gauge (SERIES_max_ms).
//   - Flush hands the counts since the last flush to the sink, a counter
//     counted nothing yet among them at 0 (so rate() sees its first
//     increase); Run flushes every FlushEvery, then once more at the end.
//
// The series are namecast_<Name>_<series>. The zero Meter is not ready:
// set Name. Safe for concurrent use.
type Meter struct {
	// Name prefixes every series: the door's name.
	Name string

	mu       sync.Mutex
	counters map[meterKey]*counter
	lats     map[meterKey]*latency
}

// meterKey is a series and up to two labels; a label with no Name is none.
type meterKey struct {
	series string
	labels [2]metrics.Label
}

type counter struct {
	n       atomic.Uint64
	flushed uint64 // under Meter.mu
	seen    bool   // flushed once (at 0 when nothing was counted)
}

type latency struct {
	n, sum, max time.Duration // n: a count
}

func keyOf(series string, labels []metrics.Label) meterKey {
	k := meterKey{series: series}
	copy(k.labels[:], labels)
	return k
}

func (k meterKey) labelList() []metrics.Label {
	switch {
	case k.labels[1].Name != "":
		return k.labels[:]
	case k.labels[0].Name != "":
		return k.labels[:1]
	}
	return nil
}

// Counter is the counter of series with labels (two at most), made on
// first use; the caller may keep it and Add to it.
func (m *Meter) Counter(series string, labels ...metrics.Label) *atomic.Uint64 {
	k := keyOf(series, labels)
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counters[k]
	if c == nil {
		if m.counters == nil {
			m.counters = map[meterKey]*counter{}
		}
		c = &counter{}
		m.counters[k] = c
	}
	return &c.n
}

// Add counts n of series with labels (two at most).
func (m *Meter) Add(n uint64, series string, labels ...metrics.Label) {
	m.Counter(series, labels...).Add(n)
}

// Count is what series with labels counted in all, flushed or not.
func (m *Meter) Count(series string, labels ...metrics.Label) uint64 {
	return m.Counter(series, labels...).Load()
}

// Observe adds one request that took d to series with labels.
func (m *Meter) Observe(d time.Duration, series string, labels ...metrics.Label) {
	k := keyOf(series, labels)
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.lats[k]
	if l == nil {
		if m.lats == nil {
			m.lats = map[meterKey]*latency{}
		}
		l = &latency{}
		m.lats[k] = l
	}
	l.n++
	l.sum += d
	l.max = max(l.max, d)
}

// Flush hands sink the counts since the last flush and the latencies of
// the interval; a nil sink drops them.
func (m *Meter) Flush(sink *metrics.Metrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, c := range m.counters {
		n := c.n.Load()
		if d := n - c.flushed; d > 0 || !c.seen {
			if sink != nil {
				sink.IncrCounterWithLabels([]string{m.Name, k.series}, float32(d), k.labelList())
			}
			c.flushed, c.seen = n, true
		}
	}
	for k, l := range m.lats {
		if l.n == 0 {
			continue
		}
		if sink != nil {
			labels := k.labelList()
			sink.AddSampleWithLabels([]string{m.Name, k.series + "_ms"}, float32(float64(l.sum)/float64(l.n)/1e6), labels)
			sink.SetGaugeWithLabels([]string{m.Name, k.series + "_max_ms"}, float32(float64(l.max)/1e6), labels)
		}
		*l = latency{}
	}
}

// Run flushes to sink, then calls gauges (the door sets its gauges there;
// nil: none), every FlushEvery until ctx is done, and once more then.
func (m *Meter) Run(ctx context.Context, sink *metrics.Metrics, gauges func(*metrics.Metrics)) {
	flush := func(time.Time) {
		m.Flush(sink)
		if gauges != nil && sink != nil {
			gauges(sink)
		}
	}
	Every(ctx, FlushEvery, flush)
	flush(time.Time{})
}
