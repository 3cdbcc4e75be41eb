package bench

import (
	"math"
	"slices"
	"time"
)

// Stat summarises the samples of one figure over repeated trials.
type Stat struct {
	Trials int     `json:"trials"`
	P50    float64 `json:"p50"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	// Missed counts trials that hit their timeout; they are included in
	// the percentiles at the timeout value, so a loss shows as a tail.
	Missed int `json:"missed,omitempty"`
	// Samples are the values themselves, sorted, when there are at most
	// maxSamples of them (namecast-bench -svg plots their distribution).
	Samples []float64 `json:"samples,omitempty"`
}

// maxSamples bounds the samples a Stat keeps: a P1 or P2 figure has tens
// to thousands, a P3 latency hundreds of thousands (summarised only).
const maxSamples = 10000

// Summarize computes a Stat by nearest rank, which never invents a value
// between two samples: with few trials, p99 is simply the worst one.
func Summarize(samples []float64) Stat {
	if len(samples) == 0 {
		return Stat{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	st := Stat{Trials: len(s), P50: rank(s, 0.50), P99: rank(s, 0.99), Max: s[len(s)-1]}
	if len(s) <= maxSamples {
		st.Samples = s
	}
	return st
}

func rank(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Seconds converts durations to the float seconds figures are kept in.
func Seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// Durations collects the samples of a timed figure and its missed trials.
type Durations struct {
	Samples []time.Duration
	Missed  int
}

// Add records one trial; timedOut marks it missed (d is then the timeout).
func (d *Durations) Add(v time.Duration, timedOut bool) {
	d.Samples = append(d.Samples, v)
	if timedOut {
		d.Missed++
	}
}

// Stat summarises the trials in seconds.
func (d *Durations) Stat() Stat {
	s := Summarize(Seconds(d.Samples))
	s.Missed = d.Missed
	return s
}
