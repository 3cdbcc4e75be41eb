package testutil

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSchedMeterReportsCPUAndWait checks the meter's plumbing, not a
// machine's load: the CPU burnt is counted, the kernel's run-queue wait is
// read where /proc has it, and Stop ends the meter's goroutine.
func TestSchedMeterReportsCPUAndWait(t *testing.T) {
	CheckLeaks(t)
	m := StartSchedMeter()
	spin := time.Now().Add(100 * time.Millisecond)
	for n := 0; time.Now().Before(spin); n++ {
		_ = strings.Repeat("x", n%64) // work the CPU until the clock moves on
	}
	r := m.Stop()
	if r.Wall < 100*time.Millisecond || r.CPU <= 0 {
		t.Errorf("wall %v, CPU %v: want at least the 100 ms spun, and some CPU", r.Wall, r.CPU)
	}
	if _, err := os.Stat("/proc/self/task"); err == nil && r.RunQueueWait < 0 {
		t.Errorf("run-queue wait unknown though /proc/self/task exists")
	}
	if r.RunQueueWait >= 0 && r.WaitPerCPU() < 0 {
		t.Errorf("wait per CPU-second %v with the wait known", r.WaitPerCPU())
	}
	if r.MaxStall < 0 || r.Stalls < 0 {
		t.Errorf("negative stall %v / %d", r.MaxStall, r.Stalls)
	}
	if s := r.String(); !strings.Contains(s, "cores") || !strings.Contains(s, "for a CPU") {
		t.Errorf("report %q", s)
	}
}
