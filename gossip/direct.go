package gossip

import (
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// Direct push. The eager push of push.go is a branching process: each
// member pushes an op once, to GossipNodes random members, and that misses
// a fraction e^-k(1-u) ≈ 6% of them (k = 3), who wait for the gossip ticks:
// the tail of a change's spread, ~0.5 s at p99 on lan whatever N. So the
// publisher instead sends its change at once to every live member it
// knows, one UDP packet each: N−1 datagrams, what a central server sends
// for one change too, and on average one packet received per member per
// change, fewer than the k each member pushed. A member that receives a
// direct push (msgDirect) applies it and pushes nothing; it still relays
// the op into the gossip queue, but into the light queue, retransmitted
// directLightMult·⌈log10(N+1)⌉ times instead of RetransmitMult (4) times
// as many: the queue is now only the repair of a lost datagram, or of a
// member the publisher did not know yet. With ~N holders each sending 4
// copies (N < 100) to random members, a member whose datagram was lost is
// missed by all of them with odds e^-4, 2%; it is then repaired by
// anti-entropy (1-2.5 s on lan), as before. An op too big to queue (a Dubbo
// URL's) is relayed as a notice of its origin (relay.go), and that goes in
// the full queue: it is small, one per change, and all that a member whose
// datagram was lost has to go on (in the light queue, a test that drops
// the datagram to one member saw 1-2 trials in 80 wait past two ticks).
//
// The budget is in datagrams, so it bounds the publisher's burst whatever
// N: a change over it (a bulk registration, or many changes in a row in a
// large cluster) goes by the epidemic push and the full queue, as before.
const (
	directRate  = 2048 // datagrams a second, sustained
	directBurst = 8192 // datagrams at once: 80 changes at N=100, 8 at 1,000
)

// directLightMult is the light queue's RetransmitMult; see above.
const directLightMult = 2

// publishDirect sends the ops of d that fit a packet to every live member
// in msgDirect messages, packing as many ops in each as fit. It returns
// false, having sent nothing, when the budget does not cover it or no
// member is known.
func (g *Gossip) publishDirect(d routes.Delta) bool {
	ml := g.ml.Load()
	if ml == nil {
		return false
	}
	room := g.cfg.Memberlist.UDPBufferSize - pushOverhead - len(g.cfg.Memberlist.Label)
	msgs := packOps(d, room)
	if len(msgs) == 0 {
		return false
	}
	nodes := g.liveNodes()
	if len(nodes) == 0 || !g.direct.take(len(nodes)*len(msgs), time.Now()) {
		if len(nodes) > 0 {
			g.m.IncrCounter([]string{"gossip", "direct", "over_budget"}, 1)
		}
		return false
	}
	for _, msg := range msgs {
		for _, n := range nodes {
			_ = ml.SendBestEffort(n, msg)
		}
	}
	g.m.IncrCounter([]string{"gossip", "direct", "sent"}, float32(len(nodes)*len(msgs)))
	return true
}

// packOps encodes d's ops as msgDirect messages of at most room bytes,
// consecutive ops together while they fit. An op too big for a packet on
// its own is left out (it is announced, as before).
func packOps(d routes.Delta, room int) [][]byte {
	var msgs [][]byte
	var cur []routes.Op
	var last []byte
	flush := func() {
		if last != nil {
			msgs = append(msgs, last)
		}
		cur, last = nil, nil
	}
	for _, op := range d.Ops {
		try := encode(msgDirect, routes.Delta{Origin: d.Origin, Inc: d.Inc, Ops: append(cur[:len(cur):len(cur)], op)})
		if len(try) <= room {
			cur, last = append(cur, op), try
			continue
		}
		flush()
		if one := encode(msgDirect, routes.Delta{Origin: d.Origin, Inc: d.Inc, Ops: []routes.Op{op}}); len(one) <= room {
			cur, last = []routes.Op{op}, one
		}
	}
	flush()
	return msgs
}

// liveNodes lists every live member but us, to send to.
func (g *Gossip) liveNodes() []*memberlist.Node {
	g.mu.Lock()
	type at struct{ name, addr string }
	live := make([]at, 0, len(g.members))
	for name, m := range g.members {
		if name != g.name && m.status == StatusAlive {
			live = append(live, at{name, m.addr})
		}
	}
	g.mu.Unlock()
	nodes := make([]*memberlist.Node, 0, len(live))
	for _, a := range live {
		if n := nodeAt(a.name, a.addr); n != nil {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// msgDirect carries a routes.Delta its origin sent to every member.
const msgDirect byte = msgPartsDeflated + 1
