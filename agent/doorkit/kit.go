package doorkit

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/agent/conns"
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

// Refusals is how a door says the connections it refuses for a bound
// (its conns.Config.Refused): each is counted, and a warning names the
// bound the first time and then at most once each 10 s, for each bound
// (all connections, one client IP's), so a flood is said without
// flooding the log.
type Refusals struct {
	// Counter counts every refusal (a Meter's connections_refused); nil
	// counts none.
	Counter *atomic.Uint64
	// Log gets the warnings.
	Log *slog.Logger
	// Say is the warning for r's bound, with its advice.
	Say func(r conns.Refusal) string

	warn [2]NowAndAgain // all connections, one IP's
}

// Refused counts r and warns, now and again.
func (rf *Refusals) Refused(r conns.Refusal) {
	if rf.Counter != nil {
		rf.Counter.Add(1)
	}
	w := &rf.warn[0]
	if r.PerIP {
		w = &rf.warn[1]
	}
	if w.Allow() {
		rf.Log.Warn(rf.Say(r), "ip", r.IP, "max", r.Max, "refused_so_far", r.Count)
	}
}
