package testutil

import (
	"testing"
	"time"
)

// pollInterval is short enough that a test waits little past the moment its
// condition holds, and long enough that polling a cluster's state does not
// steal the CPU the cluster needs to converge on a 2-core race build.
const pollInterval = 15 * time.Millisecond

// Eventually calls cond every ~15ms until it returns nil, and fails the test
// with cond's last error if that has not happened within timeout. It fails
// only on an error from a call that returned after the deadline, so a
// condition that held just in time is not reported as a failure.
//
// Eventually calls t.Fatalf, so it must run on the test's goroutine. It reads
// the clock through the time package, so inside a testing/synctest bubble the
// timeout is in the bubble's fake time.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %v", timeout, err)
			return // reached only with a fake testing.TB
		}
		<-ticker.C
	}
}
