package gossip

import "time"

// A member whose arrival we never heard of.
//
// memberlist spreads a member's arrival as one alive message, relayed
// RetransmitMult·log(N+1) times by each member that hears it. In a join
// storm (a whole cluster starting at once on a loaded host) the queues
// hold more alive messages than the packets carry, and now and then one
// member is never sent one of them: it does not know that member until
// its periodic push/pull with someone who does (every 30 s at 32 members,
// 180 s at 1,000). Until then it refuses the newcomer's routes, since it
// applies records only from live members: a client beside it cannot see
// a broker every other agent serves. Two of six formations of 150 agent
// processes on 2 cores waited 145 s or more for this; the rest took ~20.
//
// Our anti-entropy tells us sooner: a peer's digest lists only origins it
// holds as live, so one there that we have never known as a member at all
// (not dead, not departed: memberlist told us nothing) is such a miss. Once
// an origin has stayed unknown for viewRepairGrace, long enough for an
// alive message still being relayed to arrive, we push/pull with the peer
// that listed it, as memberlist's periodic push/pull would, only now; it
// merges the peer's member list the way memberlist always does, so nothing
// is taken on a peer's word alone. A member that registered nothing is in
// no digest and has no routes for us to miss: memberlist's push/pull still
// brings it. One repair at a time, and each wait is twice
// the last (up to viewRepairMaxWait), so an overloaded cluster where many
// arrivals are late pays a few push/pulls per member, not one a second.

// viewRepairMaxWait caps the wait between repairs; viewRepairForget is how
// long an unknown origin nobody lists any more is remembered.
const (
	viewRepairMaxWait = time.Minute
	viewRepairForget  = 2 * time.Minute
)

type viewRepair struct {
	unknown map[string]unknownOrigin
	running bool
	last    time.Time // the last repair started
	wait    time.Duration
}

type unknownOrigin struct{ first, last time.Time }

// viewRepairGrace is how long an origin may stay unknown before a repair:
// a few anti-entropy rounds, in which the alive messages of a join still
// being relayed arrive (a few gossip intervals, even at thousands).
func (g *Gossip) viewRepairGrace() time.Duration { return 5 * g.cfg.AntiEntropyInterval }

// noteUnknown is told the origins of from's digest that we have never
// known as members, and starts a repair when one has been unknown for the
// grace. Called without g.mu.
func (g *Gossip) noteUnknown(from string, origins []string) {
	ml := g.ml.Load()
	if ml == nil || len(origins) == 0 {
		return
	}
	now, grace := time.Now(), g.viewRepairGrace()
	g.mu.Lock()
	r := &g.repair
	if r.unknown == nil {
		r.unknown = map[string]unknownOrigin{}
	}
	due := false
	for _, o := range origins {
		u, ok := r.unknown[o]
		if !ok {
			u.first = now
		}
		u.last = now
		r.unknown[o] = u
		due = due || now.Sub(u.first) >= grace
	}
	for o, u := range r.unknown {
		if g.members[o] != nil || now.Sub(u.last) > viewRepairForget {
			delete(r.unknown, o)
		}
	}
	if r.wait == 0 || now.Sub(r.last) > 2*viewRepairMaxWait {
		r.wait = grace
	}
	peer := g.members[from]
	if !due || r.running || now.Sub(r.last) < r.wait || peer == nil || peer.status != StatusAlive {
		g.mu.Unlock()
		return
	}
	r.running, r.last = true, now
	r.wait = min(2*r.wait, viewRepairMaxWait)
	addr, missing := peer.addr, len(r.unknown)
	g.mu.Unlock()

	g.goLoop(func() {
		_, err := ml.Join([]string{addr})
		g.mu.Lock()
		g.repair.running = false
		g.mu.Unlock()
		if err != nil {
			g.log.Debug("push/pull to learn members a peer lists failed", "peer", from, "err", err)
			return
		}
		g.m.IncrCounter([]string{"gossip", "view", "repaired"}, 1)
		g.log.Info("a peer holds routes of members we never heard had joined; merged its member list by push/pull", "peer", from, "unknown", missing)
	})
}
