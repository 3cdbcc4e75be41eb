package doorkit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A flood is said the first time, then at most once an interval.
func TestNowAndAgainSaysTheFirstThenOnceAnInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n NowAndAgain
		said := 0
		for range 25 { // 25 s of one refusal every 100 ms
			for range 10 {
				if n.Allow() {
					said++
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		if said != 3 { // at 0 s, after 10 s, after 20 s
			t.Errorf("said %d times in 25 s, want 3", said)
		}
	})
}

// Every calls f each period and returns once ctx is done.
func TestEveryStopsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		calls := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(ctx, time.Second, func(time.Time) { calls++ })
		}()
		time.Sleep(3500 * time.Millisecond)
		cancel()
		<-done
		if calls != 3 {
			t.Errorf("f ran %d times in 3.5 s, want 3", calls)
		}
	})
}
