package promsink

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// Sink receives go-metrics emissions and serves them as Prometheus series
// named by Name. The zero value is not usable; call New.
type Sink struct {
	mu       sync.Mutex
	families map[string]*family // by go-metrics kind, key and label names
}

// family is one series name with one set of label names.
type family struct {
	scale    float64
	counter  *prometheus.CounterVec
	gauge    *prometheus.GaugeVec
	summary  *prometheus.SummaryVec
	labelIdx []int // label order in the emission -> sorted order
}

// New returns an empty Sink.
func New() *Sink { return &Sink{families: map[string]*family{}} }

var (
	_ metrics.MetricSink   = (*Sink)(nil)
	_ prometheus.Collector = (*Sink)(nil)
)

func (s *Sink) family(k kind, parts []string, labels []metrics.Label) (*family, []string) {
	var key strings.Builder
	key.WriteByte(byte('0' + k))
	for _, p := range parts {
		key.WriteByte('.')
		key.WriteString(p)
	}
	for _, l := range labels {
		key.WriteByte(0)
		key.WriteString(l.Name)
	}
	s.mu.Lock()
	f, ok := s.families[key.String()]
	if !ok {
		f = newFamily(k, parts, labels)
		s.families[key.String()] = f
	}
	s.mu.Unlock()
	values := make([]string, len(labels))
	for i, l := range labels {
		values[f.labelIdx[i]] = l.Value
	}
	return f, values
}

func newFamily(k kind, parts []string, labels []metrics.Label) *family {
	name, scale := Name(k, parts)
	help, ok := helps[name]
	if !ok {
		help = defaultHelp(k, parts)
	}
	names := make([]string, len(labels))
	for i, l := range labels {
		names[i] = labelName(l.Name)
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	f := &family{scale: scale, labelIdx: make([]int, len(labels))}
	for i, n := range names {
		f.labelIdx[i] = sort.SearchStrings(sorted, n)
	}
	switch k {
	case counter:
		f.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, sorted)
	case gauge:
		f.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, sorted)
	case summary:
		f.summary = prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: name, Help: help,
			Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}, MaxAge: 10 * time.Second}, sorted)
	}
	return f
}

// SetGauge sets a gauge.
func (s *Sink) SetGauge(key []string, val float32) { s.SetGaugeWithLabels(key, val, nil) }

// SetGaugeWithLabels sets a labelled gauge.
func (s *Sink) SetGaugeWithLabels(key []string, val float32, labels []metrics.Label) {
	s.SetPrecisionGaugeWithLabels(key, float64(val), labels)
}

// SetPrecisionGauge sets a gauge.
func (s *Sink) SetPrecisionGauge(key []string, val float64) {
	s.SetPrecisionGaugeWithLabels(key, val, nil)
}

// SetPrecisionGaugeWithLabels sets a labelled gauge.
func (s *Sink) SetPrecisionGaugeWithLabels(key []string, val float64, labels []metrics.Label) {
	f, values := s.family(gauge, key, labels)
	f.gauge.WithLabelValues(values...).Set(val * f.scale)
}

// EmitKey is go-metrics' key/value emission, which has no Prometheus
// meaning; namecast does not use it.
func (s *Sink) EmitKey(key []string, val float32) {}

// IncrCounter adds to a counter.
func (s *Sink) IncrCounter(key []string, val float32) { s.IncrCounterWithLabels(key, val, nil) }

// IncrCounterWithLabels adds to a labelled counter; a negative value (never
// emitted by a counter) is ignored rather than panicking.
func (s *Sink) IncrCounterWithLabels(key []string, val float32, labels []metrics.Label) {
	if val < 0 {
		return
	}
	f, values := s.family(counter, key, labels)
	f.counter.WithLabelValues(values...).Add(float64(val) * f.scale)
}

// AddSample observes a sample (a timer in milliseconds, unless the units
// table says otherwise).
func (s *Sink) AddSample(key []string, val float32) { s.AddSampleWithLabels(key, val, nil) }

// AddSampleWithLabels observes a labelled sample.
func (s *Sink) AddSampleWithLabels(key []string, val float32, labels []metrics.Label) {
	f, values := s.family(summary, key, labels)
	f.summary.WithLabelValues(values...).Observe(float64(val) * f.scale)
}

// Describe sends nothing: the series are known only once emitted, so the
// Sink is an unchecked collector.
func (s *Sink) Describe(chan<- *prometheus.Desc) {}

// Collect sends every series emitted so far.
func (s *Sink) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	fams := make([]*family, 0, len(s.families))
	for _, f := range s.families {
		fams = append(fams, f)
	}
	s.mu.Unlock()
	for _, f := range fams {
		switch {
		case f.counter != nil:
			f.counter.Collect(ch)
		case f.gauge != nil:
			f.gauge.Collect(ch)
		default:
			f.summary.Collect(ch)
		}
	}
}
