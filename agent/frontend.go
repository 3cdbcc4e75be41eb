package agent

import (
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/routes"
)

// The methods here are what protocol front-ends (the RocketMQ listener)
// use: they keep their own per-connection state and turn it into this
// agent's records.

// Apply changes this agent's own records and gossips the change; ok is
// false when nothing changed.
func (a *Agent) Apply(puts []routes.Record, deletes []string) bool {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	return a.apply(puts, deletes)
}

// ApplyRules changes cluster-scoped records (rules, KV config) and gossips
// the change, once it is saved in the data dir; ok is false when nothing
// changed. An error (the change would pass Config.RulesLimit, errors.Is
// routes.ErrRulesFull; or it could not be saved) means nothing changed anywhere.
func (a *Agent) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	return a.applyRules(puts, deletes)
}

// LocalRecords lists this agent's own records under a key prefix.
func (a *Agent) LocalRecords(prefix string) []routes.Record { return a.table.LocalRecords(prefix) }

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
