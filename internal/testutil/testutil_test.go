package testutil

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTB records failures instead of ending the test, so the helpers' failure
// paths can be checked. Embedding testing.TB satisfies its private method;
// calling anything not overridden here panics, which would show a helper
// using more of testing.TB than it should.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failures []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestEventuallySucceedsOnceCondHolds(t *testing.T) {
	CheckLeaks(t)
	calls := 0
	Eventually(t, time.Second, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if calls != 3 {
		t.Fatalf("cond called %d times, want 3", calls)
	}
}

func TestEventuallyReportsLastError(t *testing.T) {
	f := &fakeTB{}
	calls := 0
	start := time.Now()
	Eventually(f, 50*time.Millisecond, func() error {
		calls++
		return fmt.Errorf("attempt %d", calls)
	})
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("gave up after %v, before the 50ms timeout", took)
	}
	if len(f.failures) != 1 {
		t.Fatalf("failures = %q, want exactly one", f.failures)
	}
	if want := fmt.Sprintf("attempt %d", calls); !strings.HasSuffix(f.failures[0], want) {
		t.Errorf("failure %q does not end with the last error %q", f.failures[0], want)
	}
}

func TestCheckLeaksPassesWhenGoroutinesExit(t *testing.T) {
	f := &fakeTB{}
	checkLeaks(f, time.Second)
	done := make(chan struct{})
	go func() { <-done }()
	// The goroutine is still running when the check starts; closing done
	// from the cleanup path shows the check waits for it rather than
	// failing at first sight.
	go func() { time.Sleep(20 * time.Millisecond); close(done) }()
	f.runCleanups()
	if len(f.failures) != 0 {
		t.Fatalf("unexpected failures: %q", f.failures)
	}
}

func TestCheckLeaksReportsStacks(t *testing.T) {
	f := &fakeTB{}
	checkLeaks(f, 50*time.Millisecond)
	stop := make(chan struct{})
	go leakyWorker(stop)
	f.runCleanups()
	close(stop)
	if len(f.failures) != 1 {
		t.Fatalf("failures = %q, want one", f.failures)
	}
	if !strings.Contains(f.failures[0], "leakyWorker") {
		t.Errorf("failure does not name the leaked goroutine's function:\n%s", f.failures[0])
	}
}

func leakyWorker(stop chan struct{}) { <-stop }

// DefaultParallel sets -test.parallel when the command line did not: this
// binary's was not given (go test passes it only when asked).
func TestDefaultParallel(t *testing.T) {
	f := flag.Lookup("test.parallel")
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		t.Skip("-test.parallel given on the command line")
	}
	old := f.Value.String()
	defer f.Value.Set(old)
	DefaultParallel(7)
	if got := f.Value.String(); got != "7" {
		t.Errorf("-test.parallel is %s, want 7", got)
	}
}
