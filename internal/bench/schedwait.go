package bench

import (
	"fmt"
	"math"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// SchedWait is how long this process's goroutines waited, runnable, for a
// CPU over a trial (the runtime's /sched/latencies histogram, which
// samples them), and its longest stop-the-world pause for GC. A trial
// whose late deliveries coincide with waits as long is late because
// the receivers did not run, not because a packet or a protocol round was
// missed: on this 2-core machine shared with other work, that is the
// tail of a propagation in one process.
//
// Stall covers what the runtime cannot see: a goroutine that sleeps
// stallTick at a time measures how late it wakes, so a process whose
// threads the kernel does not run at all (the host's other work), or
// whose timers fire late, shows as a stall with no runnable wait.
type SchedWait struct {
	P99, Max time.Duration // runnable → running; bucket lower bounds
	GCPause  time.Duration // longest GC stop-the-world, bucket lower bound
	Stall    time.Duration // longest a stallTick sleep overslept
}

func (w SchedWait) String() string {
	return fmt.Sprintf("the process stalled up to %v, goroutines waited runnable up to %v (p99 %v), GC pauses up to %v",
		w.Stall.Round(time.Millisecond), w.Max.Round(time.Millisecond), w.P99.Round(100*time.Microsecond), w.GCPause.Round(100*time.Microsecond))
}

// stallTick is the stall probe's sleep: 200 wake-ups a second, nothing
// beside a cluster's own.
const stallTick = 5 * time.Millisecond

// stallProbe is a goroutine that sleeps stallTick at a time and keeps the
// longest it overslept, from begin until end.
type stallProbe struct {
	worst atomic.Int64 // ns
	stop  chan struct{}
	done  chan struct{}
}

func beginStall() *stallProbe {
	p := &stallProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			t := time.Now()
			select {
			case <-p.stop:
				return
			case <-time.After(stallTick):
			}
			p.note(time.Since(t) - stallTick)
		}
	}()
	return p
}

// note keeps the longest oversleep.
func (p *stallProbe) note(late time.Duration) {
	for {
		w := p.worst.Load()
		if int64(late) <= w || p.worst.CompareAndSwap(w, int64(late)) {
			return
		}
	}
}

// end stops the probe and returns the longest oversleep; nil ends nothing.
func (p *stallProbe) end() time.Duration {
	if p == nil {
		return 0
	}
	close(p.stop)
	<-p.done
	return time.Duration(p.worst.Load())
}

var schedNames = []string{"/sched/latencies:seconds", "/sched/pauses/total/gc:seconds"}

// schedSample is the histograms at one moment.
type schedSample []metrics.Sample

func readSched() schedSample {
	s := make(schedSample, len(schedNames))
	for i, n := range schedNames {
		s[i].Name = n
	}
	metrics.Read(s)
	return s
}

// since is the waits between old and s.
func (s schedSample) since(old schedSample) SchedWait {
	var w SchedWait
	if len(s) != len(schedNames) || len(old) != len(schedNames) {
		return w
	}
	hist := func(m metrics.Sample) *metrics.Float64Histogram {
		if m.Value.Kind() != metrics.KindFloat64Histogram {
			return nil
		}
		return m.Value.Float64Histogram()
	}
	w.P99, w.Max = histDelta(hist(old[0]), hist(s[0]), 0.99)
	_, w.GCPause = histDelta(hist(old[1]), hist(s[1]), 1)
	return w
}

// histDelta is the q quantile and the largest value of the samples added
// to a histogram between a and b, as the lower bounds of their buckets.
func histDelta(ha, hb *metrics.Float64Histogram, q float64) (quant, largest time.Duration) {
	if ha == nil || hb == nil || len(ha.Counts) != len(hb.Counts) || len(hb.Buckets) != len(hb.Counts)+1 {
		return 0, 0
	}
	d := make([]uint64, len(hb.Counts))
	var total uint64
	for i := range d {
		d[i] = hb.Counts[i] - ha.Counts[i]
		total += d[i]
	}
	if total == 0 {
		return 0, 0
	}
	lower := func(i int) time.Duration {
		v := hb.Buckets[i]
		if math.IsInf(v, -1) || v < 0 {
			return 0
		}
		return time.Duration(v * float64(time.Second))
	}
	want := uint64(math.Ceil(q * float64(total)))
	var run uint64
	quantDone := false
	for i, c := range d {
		run += c
		if !quantDone && run >= want {
			quant, quantDone = lower(i), true
		}
		if c > 0 {
			largest = lower(i)
		}
	}
	return quant, largest
}
