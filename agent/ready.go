package agent

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/gossip"
)

// readyAfter bounds how long an agent that expects peers (join, retry-join,
// discovery) answers "not ready" when it finds none.
const readyAfter = 30 * time.Second

// readiness says whether the agent has finished its first sync with the
// cluster (Agent.Ready).
type readiness struct {
	ready        atomic.Bool
	joined       atomic.Bool
	started      time.Time
	expectsPeers bool            // join, retry-join, discovery or a member snapshot
	gossip       *gossip.Gossip  // set once gossip runs
	stop         <-chan struct{} // closed at shutdown: ends await
}

// Ready is Agent.Ready.
func (r *readiness) Ready() bool {
	if r.ready.Load() {
		return true
	}
	if !r.expectsPeers || time.Since(r.started) > readyAfter ||
		(r.joined.Load() && r.gossip.PendingPulls() == 0) {
		r.ready.Store(true)
		return true
	}
	return false
}

// ruleSyncWait bounds how long rule writes wait for this agent's first
// sync with the cluster, from the moment the first of them began to
// wait; they wait in line, so they are stamped in the order they came
// (rulesStore.apply). Rules are ordered by a hybrid logical clock
// (routes/hlc.go): once synced, the agent has seen every rule's time and
// its write is ordered after them whatever its clock says; before, only
// its wall clock lifts it above them. Past the wait (peers unreachable)
// the write goes ahead on the wall clock rather than fail.
const ruleSyncWait = 5 * time.Second

// await waits until the agent is ready (its first sync is done), at most
// limit, or until it stops; log hears when limit ran out.
func (r *readiness) await(limit time.Duration, log *slog.Logger) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !r.Ready() {
		select {
		case <-r.stop:
			return
		case <-deadline.C:
			log.Warn("writing a rule before the first sync with the cluster; it is ordered by this host's clock")
			return
		case <-tick.C:
		}
	}
}
