package gossip

import (
	"fmt"
	"net"

	"github.com/hashicorp/memberlist"
)

// A member's name is its identity: its records, its incarnation and its
// liveness are all keyed by it. A second agent started under a live
// member's name must not merge: both would see their own name at a higher
// incarnation in each other's digests and take turns raising it
// (incarnation.go), while memberlist kept the first one's address. So a
// join is refused, on both sides of the push/pull, when the
// other side lists a member alive at another address than the live one we
// know under that name (ourselves included). memberlist asks only at a join
// (MergeDelegate), never in periodic push/pulls.
//
// A member that moved (restarted on another address before its old one
// was declared dead) looks the same to its peers, so the joining side
// refuses only when that address answers a ping under our name: a live
// process, not a previous run's leftover. Its peers refuse its join until
// the old address is declared dead; memberlist would not take the new
// address before then anyway.
//
// The live side, joined by one that lists the live side's own name at
// another address, refuses without a ping: the second agent finds the live
// one by its own ping and exits at once, so on a busy host a ping from the
// live side would often go unanswered, be taken for a leftover, and the
// live side would merge the second agent's join digest and raise its own
// incarnation above the second agent's. The joiner is
// that second agent, or a member that still lists a previous run of ours
// there, which memberlist would not replace by us before declaring it dead
// anyway; that member's records of our previous run reach us by the
// periodic anti-entropy instead. While we are joining ourselves (joining
// counts every Join under way) a join of us is still decided by the ping.

// DuplicateNameError is a join refused because a live member already has
// this agent's name.
type DuplicateNameError struct {
	Name string // the name both claim
	Addr string // the live member's gossip address
}

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("a live member named %q already runs at %s: give this agent another name (--node), or stop that one first", e.Name, e.Addr)
}

// merge is Gossip's memberlist.MergeDelegate.
type merge Gossip

func (m *merge) NotifyMerge(peers []*memberlist.Node) error {
	g := (*Gossip)(m)
	ml := g.ml.Load()
	if ml == nil {
		return nil
	}
	// Our own table, not ml.Members(): memberlist hands out pointers to
	// nodes it rewrites while we would read them.
	known := map[string]string{}
	g.mu.Lock()
	for name, m := range g.members {
		if m.status == StatusAlive {
			known[name] = m.addr
		}
	}
	g.mu.Unlock()
	for _, p := range peers {
		if p.State != memberlist.StateAlive && p.State != memberlist.StateSuspect {
			continue
		}
		live, ok := known[p.Name]
		listed := nodeAddr(p)
		if !ok || live == listed {
			continue
		}
		if p.Name != g.name {
			g.log.Warn("refused a join: it lists a member at another address than the live one of that name",
				"member", p.Name, "live", live, "listed", listed)
			return fmt.Errorf("member %q is alive at %s, not %s", p.Name, live, listed)
		}
		dup := &DuplicateNameError{Name: p.Name, Addr: listed}
		if g.joining.Load() == 0 {
			// Joined by one that lists us elsewhere: refused without a
			// ping (see above).
			g.log.Warn("refused a join that lists this agent's name at another address", "name", g.name, "listed", listed)
			return dup
		}
		// Our own name elsewhere while we join: the live agent we are
		// joining beside, unless nothing answers there.
		if _, err := ml.Ping(p.Name, &net.UDPAddr{IP: p.Addr, Port: int(p.Port)}); err != nil {
			continue
		}
		g.duplicate.Store(dup)
		return dup
	}
	return nil
}
