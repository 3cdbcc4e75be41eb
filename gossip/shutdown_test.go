package gossip

import (
	"sync"
	"sync/atomic"
	"testing"
)

// memberlist's goroutines call our delegates, which may start a goroutine
// (a view repair's push/pull) at any moment, Shutdown's included. Every
// such start must either come before Shutdown's wait, and be waited for,
// or not happen: none may run once Shutdown has returned. Under -race the
// old goLoop was reported here (WaitGroup Add concurrent with Wait).
func TestNoGoroutineStartsAfterShutdown(t *testing.T) {
	for range 200 {
		g := newBare(t, "me")
		var after, late atomic.Int64
		var done atomic.Bool
		var starters sync.WaitGroup
		for range 4 {
			starters.Add(1)
			go func() {
				defer starters.Done()
				for !done.Load() {
					g.goLoop(func() {
						if done.Load() {
							late.Add(1)
						}
					})
				}
				if g.goLoop(func() {}) {
					after.Add(1)
				}
			}()
		}
		if err := g.Shutdown(); err != nil {
			t.Fatal(err)
		}
		done.Store(true)
		starters.Wait()
		if n := after.Load(); n > 0 {
			t.Fatalf("goLoop started %d goroutines after Shutdown returned", n)
		}
		if n := late.Load(); n > 0 {
			t.Fatalf("%d goroutines Shutdown did not wait for ran after it returned", n)
		}
	}
}
