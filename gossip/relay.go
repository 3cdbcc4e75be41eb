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
func (g *Gossip) relay(d routes.Delta) {
	for _, op := range d.Ops {
		msg := encode(msgOps, routes.Delta{Origin: d.Origin, Inc: d.Inc, Ops: []routes.Op{op}})
		g.spread(d.Origin+"\x00"+op.Key, msg) // one too big to queue: its origin announced it
	}
	g.m.IncrCounter([]string{"gossip", "ops", "relayed"}, float32(len(d.Ops)))
}
