package gossip

import "github.com/namecast/namecast/routes"

// relay passes on an op we just learned by gossip, as Serf does with its
// user events. memberlist re-gossips only its own membership messages, so
// without this a delta reaches only the members its origin picks itself:
// RetransmitMult·log10(N+1) random picks, about 60% of a 10-member cluster,
// the rest waiting ~1.5 s for anti-entropy. A member relays an op once,
// when it first applies it (a stale or repeated op is not news), so the
// cost is the usual epidemic's N·limit sends per op. The broadcast keeps
// the op's origin+key name: a newer op for the key replaces it in the
// queue, and an older one never gets there because it does not apply.
//
// An op too big to queue (over half a packet: a Dubbo URL's) is pushed but
// not retransmitted, so a member the pushes all missed (about one in 40 at
// N=10, a few per op at N=50) had only its origin's notice, which a
// member that already holds the op does not pass on, and anti-entropy
// (a probe's summary, a digest, the pull grace: 0.5-2.5 s on lan) to learn
// of it. Such an op is relayed as a notice of its origin instead: ~100
// bytes that every holder gossips on its next ticks, so the member the
// push missed hears of it within a tick or so, as it would of a small op,
// and pulls the origin at once. One notice per origin stays queued
// however many ops it relays (the newest replaces the others).
//
// An op that came direct from its origin (direct.go) reached nearly every
// member already: it is not pushed on, and is queued in the light queue.
func (g *Gossip) relay(d routes.Delta, direct bool) {
	unqueued := false
	for _, op := range d.Ops {
		msg := encode(msgOps, routes.Delta{Origin: d.Origin, Inc: d.Inc, Ops: []routes.Op{op}})
		if !g.spread(d.Origin+"\x00"+op.Key, msg, direct) {
			unqueued = true
		}
	}
	if unqueued {
		// In the full queue even when the op came direct: the notice is
		// small, one per change, and a member whose datagram was lost has
		// only it (a Dubbo URL's op is too big to queue).
		g.announce(d.Origin)
	}
	g.m.IncrCounter([]string{"gossip", "ops", "relayed"}, float32(len(d.Ops)))
}
