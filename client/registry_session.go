package client

import (
	"context"
	"fmt"
	"time"
)

// tagIncarnation is the member tag an agent publishes its incarnation in
// (gossip.TagIncarnation); it changes with every start of the agent.
const tagIncarnation = "inc"

// sessionLoop notices restarts of the local agent, which cost this process
// its dynamic registrations (the agent owns them, and a new agent starts
// empty). Every RetryPeriod it reads the agent's own incarnation tag from
// GET /v1/members (after learning the agent's name from GET /v1/health):
//
//   - A new incarnation means the agent restarted: replay the registrations,
//     and restart every watch from index 0. The new agent's index started
//     over, so a watch whose query reached it with the old agent's index
//     would otherwise hang until its wait runs out.
//   - A failed read may be a restart in progress: after the next success,
//     do the same. So does the first success, since writes and queries
//     made before it may have reached an agent that restarted before it.
//     Both are idempotent: a needless round costs a few requests.
//
// It polls rather than blocks: a blocking query on the member list would
// fetch the whole list at every change anywhere in the cluster, and could
// itself reach a restarted agent with a stale index.
func (r *Registry) sessionLoop() {
	var (
		node, inc string
		unsure    = true // no incarnation known to have seen our writes
		down      bool   // the last read failed
	)
	tick := time.NewTicker(r.opts.RetryPeriod)
	defer tick.Stop()
	for {
		now, name, err := r.incarnation(node)
		switch {
		case r.ctx.Err() != nil:
			return
		case err != nil:
			if !unsure {
				r.log.Warn("agent unreachable; will replay registrations when it answers", "err", err)
			}
			unsure, node, down = true, "", true
		case inc != "" && now != inc:
			r.log.Info("agent restarted; replaying registrations and watches", "node", name)
			fallthrough
		case unsure:
			if down {
				r.log.Info("agent answers again", "node", name)
			}
			r.replay()
			r.kickWatches()
		}
		if err == nil {
			node, inc, unsure, down = name, now, false, false
		}
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// incarnation reads the agent's incarnation tag, and its name when node is
// not known yet.
func (r *Registry) incarnation(node string) (inc, name string, err error) {
	ctx, cancel := context.WithTimeout(r.ctx, opTimeout)
	defer cancel()
	if node == "" {
		h, _, err := r.c.Health(ctx, nil)
		if err != nil {
			return "", "", err
		}
		node = h.Node
	}
	ms, _, err := r.c.Members(ctx, nil)
	if err != nil {
		return "", "", err
	}
	for _, m := range ms {
		if m.Name == node {
			return m.Tags[tagIncarnation], node, nil
		}
	}
	// Another agent took the address; the next round asks who it is.
	return "", "", fmt.Errorf("namecast: agent %s is not in its own member list", node)
}

// nextBackoff doubles the wait after a failure, from the client's minimum
// up to RetryPeriod: failed calls are retried at least every RetryPeriod.
func (r *Registry) nextBackoff(b time.Duration) time.Duration {
	return min(max(2*b, r.c.backoffMin), r.opts.RetryPeriod)
}
