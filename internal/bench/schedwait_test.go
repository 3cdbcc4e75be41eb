package bench

import (
	"math"
	"runtime/metrics"
	"testing"
	"time"
)

func TestHistDeltaCountsOnlyWhatWasAdded(t *testing.T) {
	buckets := []float64{math.Inf(-1), 0.001, 0.01, 0.1, 1, math.Inf(1)}
	a := &metrics.Float64Histogram{Buckets: buckets, Counts: []uint64{5, 0, 0, 7, 0}}
	// Added: 98 waits under 1 ms, one of 1-10 ms, one of 100 ms-1 s; the
	// 7 of 100 ms-1 s were there before.
	b := &metrics.Float64Histogram{Buckets: buckets, Counts: []uint64{103, 1, 0, 8, 0}}
	q, largest := histDelta(a, b, 0.99)
	if q != time.Millisecond || largest != 100*time.Millisecond {
		t.Errorf("p99 %v, largest %v; want 1ms (99th of 100 is the 1-10 ms one) and 100ms", q, largest)
	}
	if q, largest := histDelta(a, a, 0.99); q != 0 || largest != 0 {
		t.Errorf("nothing added: got %v, %v", q, largest)
	}
	if _, largest := histDelta(a, &metrics.Float64Histogram{Buckets: buckets[:3], Counts: []uint64{1, 1}}, 1); largest != 0 {
		t.Errorf("mismatched histograms: got %v", largest)
	}
}

func TestSchedWaitReadsTheRuntime(t *testing.T) {
	s := readSched()
	for i, m := range s {
		if m.Value.Kind() != metrics.KindFloat64Histogram {
			t.Fatalf("%s: kind %v, not a histogram (renamed in this Go?)", schedNames[i], m.Value.Kind())
		}
	}
	if w := readSched().since(s); w.Max < w.P99 {
		t.Errorf("max %v under p99 %v", w.Max, w.P99)
	}
}

func TestStallProbeKeepsTheLongestOversleepAndStops(t *testing.T) {
	p := beginStall()
	p.note(30 * time.Millisecond)
	p.note(10 * time.Millisecond)
	if got := p.end(); got < 30*time.Millisecond {
		t.Errorf("stall %v; want the longest noted, 30ms or more", got)
	}
	var none *stallProbe
	if got := none.end(); got != 0 {
		t.Errorf("a probe never begun: %v", got)
	}
}
