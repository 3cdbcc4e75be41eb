package bench

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// HeapInUse collects garbage first, so the figure is live data plus the
// heap's fragmentation, not what the next GC would free anyway.
func HeapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// ReleaseMemory collects garbage and returns freed memory to the OS now,
// so a cluster that was just closed does not charge its clean-up to the
// CPU figures of the next one.
func ReleaseMemory() { debug.FreeOSMemory() }

// HeapGrowth is how much the heap in use grew since before (a HeapInUse
// reading), or 0 if it shrank.
func HeapGrowth(before uint64) uint64 {
	now := HeapInUse()
	if now < before {
		return 0
	}
	return now - before
}

// ProcessRSS is this process's resident set (VmRSS of /proc/self/status),
// in bytes; 0 where /proc is not available. It covers every agent the
// process runs, not one.
func ProcessRSS() uint64 { return procStatus("VmRSS:") }

// ProcessPeakRSS is this process's peak resident set so far (VmHWM), in
// bytes; 0 where /proc is not available.
func ProcessPeakRSS() uint64 { return procStatus("VmHWM:") }

// ProcessRSSParts splits this process's resident set into anonymous
// memory (heap, stacks, runtime) and file-backed pages (the binary).
func ProcessRSSParts() (anon, file uint64) {
	return procStatus("RssAnon:"), procStatus("RssFile:") + procStatus("RssShmem:")
}

// procStatus reads one "NAME: n kB" field of /proc/self/status, in bytes.
func procStatus(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// MB converts bytes to mebibytes.
func MB(b uint64) float64 { return float64(b) / (1 << 20) }

// LoadAverage is the one-minute load average of the machine (0 where
// /proc is not available): a figure measured while other work ran on the
// same cores says so in its report.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// CPUTime is the user plus system CPU time this process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
