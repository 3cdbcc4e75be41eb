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
// with cond's last error if that has not happened within timeout. cond is
// always called at least once, and once more after the deadline has passed,
// so a slow cond cannot make Eventually fail without a fresh answer.
//
// Eventually calls t.Fatalf, so it must run on the test's goroutine.
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
