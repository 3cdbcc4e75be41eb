package gossip

import (
	"math/rand/v2"

	"github.com/hashicorp/memberlist"
)

// The *Node values memberlist.Members returns point into memberlist's own
// state, which it rewrites under a lock we cannot take: a member's State on
// every suspicion, its address when it comes back. Reading them (as
// SendReliable and SendBestEffort do) races with those writes, and a torn
// Addr slice could send to garbage. So sends go to private copies built
// from what the event delegate recorded, which memberlist calls with that
// lock held. Only Name, which memberlist never rewrites, is read from its
// own nodes.

// node returns a private copy of alive member name's address, or nil.
func (g *Gossip) node(name string) *memberlist.Node {
	g.mu.Lock()
	m := g.members[name]
	addr := ""
	if m != nil && m.status == StatusAlive {
		addr = m.addr
	}
	g.mu.Unlock()
	if addr == "" {
		return nil
	}
	return nodeAt(name, addr)
}

// randomPeer picks an alive member other than us, or nil.
func (g *Gossip) randomPeer() *memberlist.Node {
	g.mu.Lock()
	var names []string
	for name, m := range g.members {
		if name != g.name && m.status == StatusAlive {
			names = append(names, name)
		}
	}
	g.mu.Unlock()
	if len(names) == 0 {
		return nil
	}
	return g.node(names[rand.IntN(len(names))])
}
