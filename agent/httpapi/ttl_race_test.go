package httpapi

import (
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// A renewal that lands while its old deadline is being expired must not be
// withdrawn after it was accepted. The invariant checked, with regMu held
// so no call is half done: every registration with a deadline is live.
// Before expiry took regMu for the whole of its work, the expirer could
// take a key, a renewal re-register it, and the expirer then withdraw it,
// leaving a deadline for a registration that no longer existed.
func TestRenewalRacingExpiryIsKept(t *testing.T) {
	testutil.CheckLeaks(t)
	a := startLone(t)
	const u = "dubbo://10.0.0.1:20880/com.example.Renewed"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	loop := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					f()
				}
			}
		}()
	}
	loop(func() {
		if _, err := a.RegisterURL(u, time.Second); err != nil {
			t.Error(err)
		}
	})
	// Every deadline is due "now" for this expirer, so each pass withdraws
	// whatever was registered before it.
	loop(func() { a.expire(time.Now().Add(time.Hour)) })
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		a.regMu.Lock()
		a.ttl.mu.Lock()
		for key := range a.ttl.deadlines {
			if len(a.table.LocalRecords(key)) == 0 {
				t.Errorf("%s has a TTL deadline but is not registered: a renewal was withdrawn after it was accepted", key)
			}
		}
		a.ttl.mu.Unlock()
		a.regMu.Unlock()
		if t.Failed() {
			break
		}
	}
	close(stop)
	wg.Wait()
}
