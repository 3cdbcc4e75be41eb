package doorkit

import (
	"context"
	"sync/atomic"
	"time"
)

// Every calls f every d until ctx is done; it returns then.
func Every(ctx context.Context, d time.Duration, f func(now time.Time)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			f(now)
		}
	}
}

// NowAndAgain lets a repeated warning through: the first, then at most
// one each Interval (10 s when zero), so a flood (refused connections) is
// said without flooding the log. Its zero value is ready.
type NowAndAgain struct {
	Interval time.Duration
	last     atomic.Int64 // unix ns of the last one let through; 0: none yet
}

// Allow reports whether this occurrence is to be said.
func (n *NowAndAgain) Allow() bool {
	every := n.Interval
	if every == 0 {
		every = 10 * time.Second
	}
	now := time.Now().UnixNano()
	last := n.last.Load()
	if last != 0 && now-last <= int64(every) {
		return false
	}
	return n.last.CompareAndSwap(last, now)
}
