package testutil

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// leakTimeout bounds how long the check waits for goroutines to finish after
// the test's other cleanups ran: owners stop their goroutines in Shutdown,
// but those still need a moment to observe it and return.
const leakTimeout = 5 * time.Second

// CheckLeaks fails t if goroutines started during the test are still running
// once the test and its cleanups are done. It snapshots the running
// goroutines now and registers a cleanup that polls for up to 5s until every
// goroutine not in the snapshot has exited, then reports the stacks of the
// ones that have not.
//
// Call it first in the test: cleanups run last-registered-first, so the check
// then runs after the cleanups that shut the test's components down. It
// cannot tell the test's goroutines from those of tests running in parallel,
// so do not use it in tests that call t.Parallel or run beside them.
func CheckLeaks(t testing.TB) {
	t.Helper()
	checkLeaks(t, leakTimeout)
}

func checkLeaks(t testing.TB, timeout time.Duration) {
	before := make(map[string]bool)
	for _, g := range goroutines() {
		before[g.id] = true
	}
	t.Cleanup(func() {
		var leaked []goroutine
		deadline := time.Now().Add(timeout)
		for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
			leaked = leaked[:0]
			for _, g := range goroutines() {
				if !before[g.id] && !ignorable(g.stack) {
					leaked = append(leaked, g)
				}
			}
			if len(leaked) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(wait)
		}
		if len(leaked) == 0 {
			return
		}
		var b strings.Builder
		for _, g := range leaked {
			b.WriteString("\n\n")
			b.WriteString(g.stack)
		}
		t.Errorf("%d goroutine(s) leaked, still running %v after the test:%s",
			len(leaked), timeout, b.String())
	})
}

// goroutine is one record of runtime.Stack(all=true) output.
type goroutine struct {
	id    string // "goroutine 42"; unique for the life of the process
	stack string
}

// goroutines returns every user goroutine except the calling one.
func goroutines() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []goroutine
	// The first record is the caller's own goroutine.
	for i, rec := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue
		}
		s := string(bytes.TrimSpace(rec))
		header, _, _ := strings.Cut(s, " [")
		gs = append(gs, goroutine{id: header, stack: s})
	}
	return gs
}

// ignorableFrames mark goroutines the testing package and runtime start and
// own, which come and go between tests without the test leaking them.
var ignorableFrames = []string{
	"testing.tRunner(",
	"testing.(*T).Run(",
	"testing.(*T).Parallel(",
	"testing.(*M).",
	"testing.runTests",
	"testing.runFuzzTests(",
	"os/signal.signal_recv(",
	"os/signal.loop(",
	"runtime.ensureSigM(",
	"created by runtime.",
	"created by testing.(*M).",
}

func ignorable(stack string) bool {
	for _, f := range ignorableFrames {
		if strings.Contains(stack, f) {
			return true
		}
	}
	return false
}
