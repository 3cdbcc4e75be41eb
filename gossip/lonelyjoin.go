package gossip

import (
	"math/rand/v2"
	"time"
)

// A join through a member that knows almost nobody.
//
// When a whole cluster starts at once on a loaded host, a member may join
// through one whose own join is still in flight (a push/pull there takes
// seconds): that one has already sent the cluster its state, listing only
// itself. The push/pull gives the two of them each other and nobody else,
// and each queues the other's alive message, retransmitted
// RetransmitMult·log(N+1) times to the members known then: it is spent on
// the two of them. When the other's join is answered, it learns the
// cluster and the cluster learns it, but nobody relays ours any more, and
// the rest of the cluster hears of us only from memberlist's periodic
// push/pull with a random member (every 90 s at N=100), so a cluster
// started all at once could wait that long for its last member
// (measured in docs/bench/history.md); Serf is exposed the same way.
//
// So a member whose join answer listed fewer than GossipNodes members
// besides itself is lonely: once it knows GossipNodes more, it pushes its
// state to one of those it did not know then, which learns us (and
// whoever joined through us meanwhile) as new and gossips our alive
// messages to its whole view. Until then it refreshes its view now and
// then with a push/pull to a member it knows (after 1, 2, 4, 8 and 16
// anti-entropy intervals), since the gossip that tells it of the others
// can miss it as easily. A small cluster that stays small costs five
// push/pulls per join; a lonely member of a large one, two.

// lonelyRefreshes is how many times a lonely member refreshes its view.
const lonelyRefreshes = 5

type lonelyJoin struct {
	known     map[string]struct{} // who we knew after the join
	next      time.Time           // next refresh
	wait      time.Duration       // doubles after each refresh
	refreshes int
}

// noteJoin records whether a join left us lonely. Only joins the agent
// asks for (and reconnects) count; the push/pulls below do not.
func (g *Gossip) noteJoin(now time.Time) {
	ml := g.ml.Load()
	if ml == nil {
		return
	}
	var l *lonelyJoin
	if members := ml.Members(); len(members)-1 < g.cfg.Memberlist.GossipNodes {
		l = &lonelyJoin{known: make(map[string]struct{}, len(members)), wait: g.cfg.AntiEntropyInterval}
		l.next = now.Add(l.wait)
		for _, n := range members {
			l.known[n.Name] = struct{}{}
		}
	}
	g.mu.Lock()
	g.lonely = l
	g.mu.Unlock()
}

// reannounce runs on every anti-entropy tick: it pushes our state to a
// member a lonely join did not tell of us, once we know GossipNodes of
// them, or refreshes our view when due. The push/pull goes on its own
// goroutine.
func (g *Gossip) reannounce(now time.Time) {
	ml := g.ml.Load()
	if ml == nil {
		return
	}
	// Asked before taking g.mu, never under it: memberlist calls our
	// delegates (NotifyJoin → upsert takes g.mu) holding its node lock,
	// so asking it for members while holding g.mu deadlocks both.
	members := ml.NumMembers()
	g.mu.Lock()
	l := g.lonely
	if l == nil {
		g.mu.Unlock()
		return
	}
	grown := members >= len(l.known)+g.cfg.Memberlist.GossipNodes
	refresh := !grown && l.refreshes < lonelyRefreshes && !now.Before(l.next)
	if grown {
		g.lonely = nil
	} else if refresh {
		l.refreshes++
		l.wait *= 2
		l.next = now.Add(l.wait)
	}
	g.mu.Unlock()
	if !grown && !refresh {
		return
	}
	// Addresses from our own table under its lock, not from memberlist's
	// nodes, whose Addr and Port it rewrites (see nodes.go).
	var to []string
	g.mu.Lock()
	for name, m := range g.members {
		if _, known := l.known[name]; known != grown && name != g.name && m.status == StatusAlive {
			to = append(to, m.addr)
		}
	}
	g.mu.Unlock()
	if len(to) == 0 {
		return
	}
	addr := to[rand.IntN(len(to))]
	g.goLoop(func() {
		n, err := ml.Join([]string{addr})
		switch {
		case n == 0:
			g.log.Debug("push/pull after a lonely join failed", "addr", addr, "err", err)
			if grown { // another, on the next tick
				g.mu.Lock()
				if g.lonely == nil {
					g.lonely = l
				}
				g.mu.Unlock()
			}
		case grown:
			g.m.IncrCounter([]string{"gossip", "join", "reannounced"}, 1)
			g.log.Info("pushed our state to a member we did not know when we joined: the member we joined through knew too few to spread our arrival", "addr", addr)
		default:
			g.m.IncrCounter([]string{"gossip", "join", "refreshed"}, 1)
		}
	})
}
