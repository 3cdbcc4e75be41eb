package agent

import (
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/agent/host"
)

// Host is what the agent gives every door (package host): changes, views,
// readiness and leases. Nil before Start.
func (a *Agent) Host() host.Host { return a.host }

// startHost makes the doors' host once gossip runs (its changes are
// gossiped).
func (a *Agent) startHost() {
	a.host = host.New(host.Config{Table: a.table, Leases: a.leases, Publish: a.gossip.Publish, RTT: a.gossip.RTT,
		Rules: a.applyRules, Ready: a.Ready, Metrics: a.metrics, Logger: a.log})
}

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
