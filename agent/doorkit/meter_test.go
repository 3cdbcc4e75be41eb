package doorkit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-metrics"
)

func sink(t *testing.T) (*metrics.Metrics, *metrics.InmemSink) {
	t.Helper()
	s := metrics.NewInmemSink(time.Hour, time.Hour)
	mc := metrics.DefaultConfig("namecast")
	mc.EnableHostname, mc.EnableRuntimeMetrics = false, false
	m, err := metrics.New(mc, s)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// series is every counter's sum and every gauge's and sample's value.
func series(s *metrics.InmemSink) map[string]float64 {
	got := map[string]float64{}
	for _, iv := range s.Data() {
		for k, v := range iv.Counters {
			got[k] = v.Sum
		}
		for k, v := range iv.Gauges {
			got[k] = float64(v.Value)
		}
		for k, v := range iv.Samples {
			got["sample "+k] = v.Sum / float64(v.Count)
		}
	}
	return got
}

// A flush hands on what was counted since the last one, by labels; a
// counter made but not counted yet goes out at 0; latencies go out as
// the interval's mean and maximum, then start again.
func TestMeterFlushesCountsSinceTheLastFlush(t *testing.T) {
	m, s := sink(t)
	meter := &Meter{Name: "door"}
	refused := meter.Counter("connections_refused")
	code := func(v string) metrics.Label { return metrics.Label{Name: "code", Value: v} }
	meter.Add(2, "requests", code("A"))
	meter.Counter("requests", code("B")).Add(1)
	meter.Observe(10*time.Millisecond, "latency")
	meter.Observe(30*time.Millisecond, "latency")
	meter.Flush(m)
	want := map[string]float64{
		"namecast.door.connections_refused": 0,
		"namecast.door.requests;code=A":     2,
		"namecast.door.requests;code=B":     1,
		"sample namecast.door.latency_ms":   20,
		"namecast.door.latency_max_ms":      30,
	}
	got := series(s)
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (there: %v), want %v; all %v", k, g, ok, v, got)
		}
	}
	refused.Add(1)
	meter.Add(1, "requests", code("A"))
	meter.Flush(m)
	got = series(s)
	for k, v := range map[string]float64{"namecast.door.connections_refused": 1, "namecast.door.requests;code=A": 3, "namecast.door.requests;code=B": 1} {
		if got[k] != v {
			t.Errorf("after the second flush %s = %v, want %v", k, got[k], v)
		}
	}
	if n := meter.Count("requests", code("A")); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
}

// Run flushes every FlushEvery, sets the door's gauges, and flushes once
// more when its context ends.
func TestMeterRunFlushesUntilItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, s := sink(t)
		meter := &Meter{Name: "door"}
		ctx, cancel := context.WithCancel(t.Context())
		gauges := 0
		done := make(chan struct{})
		go func() {
			meter.Run(ctx, m, func(m *metrics.Metrics) { gauges++; m.SetGauge([]string{"door", "open"}, 7) })
			close(done)
		}()
		meter.Add(1, "requests")
		time.Sleep(FlushEvery + time.Millisecond)
		if got := series(s)["namecast.door.requests"]; got != 1 || gauges != 1 {
			t.Fatalf("after one interval: requests %v, gauges set %d times", got, gauges)
		}
		meter.Add(1, "requests")
		cancel()
		<-done
		if got := series(s); got["namecast.door.requests"] != 2 || got["namecast.door.open"] != 7 || gauges != 2 {
			t.Fatalf("after the end: %v, gauges set %d times", got, gauges)
		}
	})
}
