package testutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stallTick is how often the meter's goroutine asks to run: a wake-up later
// than this by more than a scheduler slice is the process going unscheduled.
const stallTick = 10 * time.Millisecond

// SchedMeter measures how promptly this process was scheduled while a
// real-time test ran, so a timing failure can say whether the machine
// starved the process (other processes held the CPUs) or the code under
// test was slow. Start it with StartSchedMeter and read it with Stop.
type SchedMeter struct {
	start time.Time
	cpu0  time.Duration
	wait0 map[string]time.Duration // run-queue wait by thread id, at start
	stop  chan struct{}
	done  chan struct{}

	mu       sync.Mutex
	maxStall time.Duration
	stalls   int // wake-ups later than SlowWake
}

// SlowWake is the lateness counted as a stall: half the lan profile's
// probe timeout, the scale at which memberlist's acks start missing.
const SlowWake = 250 * time.Millisecond

// SchedReport is what a SchedMeter saw.
type SchedReport struct {
	Wall time.Duration
	// CPU is the user and system time the process used: CPU/Wall is how
	// many cores it needed.
	CPU time.Duration
	// RunQueueWait is the time the process's threads spent ready to run but
	// waiting for a CPU (summed over threads, from the kernel's schedstat;
	// -1 where that is not available): time the machine, not the process,
	// took.
	RunQueueWait time.Duration
	// MaxStall is the longest a goroutine that only sleeps 10 ms at a time
	// woke up late, and Stalls how many of its wake-ups were late by more
	// than SlowWake.
	MaxStall time.Duration
	Stalls   int
}

// StartSchedMeter starts measuring; Stop ends it (the meter runs one
// goroutine until then).
func StartSchedMeter() *SchedMeter {
	m := &SchedMeter{start: time.Now(), cpu0: processCPU(), wait0: threadWaits(),
		stop: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	return m
}

func (m *SchedMeter) run() {
	defer close(m.done)
	timer := time.NewTimer(stallTick)
	defer timer.Stop()
	for {
		asked := time.Now()
		select {
		case <-m.stop:
			return
		case <-timer.C:
		}
		late := time.Since(asked) - stallTick
		m.mu.Lock()
		m.maxStall = max(m.maxStall, late)
		if late > SlowWake {
			m.stalls++
		}
		m.mu.Unlock()
		timer.Reset(stallTick)
	}
}

// Stop ends the measurement and reports it.
func (m *SchedMeter) Stop() SchedReport {
	close(m.stop)
	<-m.done
	r := SchedReport{Wall: time.Since(m.start), CPU: processCPU() - m.cpu0, RunQueueWait: -1}
	if m.wait0 != nil {
		if now := threadWaits(); now != nil {
			r.RunQueueWait = 0
			for tid, w := range now {
				r.RunQueueWait += w - m.wait0[tid] // a thread started since counts from zero
			}
		}
	}
	m.mu.Lock()
	r.MaxStall, r.Stalls = m.maxStall, m.stalls
	m.mu.Unlock()
	return r
}

// WaitPerCPU is the run-queue wait per second of CPU used: how deep the
// machine's run queue was, as this process felt it. With R threads
// runnable on C cores each runs C/R of the time it wants, so the ratio is
// about R/C - 1: ~1 beside one other busy process on 2 cores, ~9 at a
// load of 20. It is -1 when the wait is unknown, 0 for an idle process.
func (r SchedReport) WaitPerCPU() float64 {
	if r.RunQueueWait < 0 {
		return -1
	}
	if r.CPU <= 0 {
		return 0
	}
	return r.RunQueueWait.Seconds() / r.CPU.Seconds()
}

func (r SchedReport) String() string {
	wait := "unknown"
	if r.RunQueueWait >= 0 {
		wait = fmt.Sprintf("%v (%.1f s per CPU-second)", r.RunQueueWait.Round(time.Millisecond), r.WaitPerCPU())
	}
	return fmt.Sprintf("over %v the process used %.2f cores; its threads waited %s for a CPU; "+
		"a 10 ms sleeper woke up to %v late (%d times over %v)",
		r.Wall.Round(time.Millisecond), r.CPU.Seconds()/r.Wall.Seconds(), wait,
		r.MaxStall.Round(time.Millisecond), r.Stalls, SlowWake)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadWaits reads each thread's run-queue wait (the second field of
// /proc/self/task/TID/schedstat, in ns); nil where /proc has no schedstat.
func threadWaits() map[string]time.Duration {
	paths, _ := filepath.Glob("/proc/self/task/*/schedstat")
	if len(paths) == 0 {
		return nil
	}
	out := make(map[string]time.Duration, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		out[filepath.Base(filepath.Dir(p))] = time.Duration(ns)
	}
	return out
}
