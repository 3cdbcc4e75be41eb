package agent

import (
	"sync/atomic"
	"time"
)

// readyAfter bounds how long an agent that expects peers (join, retry-join,
// discovery) answers "not ready" when it finds none.
const readyAfter = 30 * time.Second

type readiness struct {
	ready        atomic.Bool
	joined       atomic.Bool
	started      time.Time
	expectsPeers bool // join, retry-join, discovery or a member snapshot
}

// Ready reports whether the agent has finished its first sync with the
// cluster, so an empty answer means "no such route" rather than "not
// learned yet". A lone agent is ready at once.
func (a *Agent) Ready() bool {
	r := &a.readiness
	if r.ready.Load() {
		return true
	}
	if !r.expectsPeers || time.Since(r.started) > readyAfter ||
		(r.joined.Load() && a.gossip.PendingPulls() == 0) {
		r.ready.Store(true)
		return true
	}
	return false
}

// ruleSyncWait bounds how long rule writes wait for this agent's first
// sync with the cluster, from the moment the first of them began to
// wait; they wait in line, so they are stamped in the order they came
// (applyRules). Rules are ordered by a hybrid logical clock
// (routes/hlc.go): once synced, the agent has seen every rule's time and
// its write is ordered after them whatever its clock says; before, only
// its wall clock lifts it above them. Past the wait (peers unreachable)
// the write goes ahead on the wall clock rather than fail.
const ruleSyncWait = 5 * time.Second

// awaitSync waits until the agent is ready (its first sync is done), at
// most limit, or until it stops.
func (a *Agent) awaitSync(limit time.Duration) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !a.Ready() {
		select {
		case <-a.ctx.Done():
			return
		case <-deadline.C:
			a.log.Warn("writing a rule before the first sync with the cluster; it is ordered by this host's clock")
			return
		case <-tick.C:
		}
	}
}
