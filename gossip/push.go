package gossip

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Eager push. memberlist sends queued broadcasts only on its gossip tick,
// so every hop of a change waits up to a GossipInterval for the holder's
// next tick, and the change takes R(N)·~0.6·GossipInterval to reach
// everyone, exactly as a Serf user event does. A member that publishes or
// first applies an op therefore also sends it at once, in its own UDP
// packet, to GossipNodes random live members; the queued copy (for an op
// too big to queue, a notice of its origin: relay.go) is still
// retransmitted as before, so nothing depends on these packets arriving.
// The epidemic then advances at network speed and the ticks only catch
// stragglers. Each member pushes an op once, so the cost is N·GossipNodes
// extra small packets per op; the budget bounds it in bursts (a large
// registration is 64 ops), past which ops travel by the queue alone.
//
// Since direct.go, this epidemic is the fallback: a publisher within its
// direct budget sends the change to every member itself and pushes
// nothing, and a member that got an op direct pushes nothing either. An op
// learned by gossip (from a publisher over its direct budget, or relayed
// from a queue) is still pushed as above.
const (
	pushRate  = 60  // eager packets per second, sustained: 20 ops to 3 members
	pushBurst = 200 // eager packets at once: 64 ops to 3 members
)

// pushOverhead bounds what memberlist adds to a message sent on its own
// (SendBestEffort): message type, checksum, compression and encryption
// headers; the cluster label comes on top.
const pushOverhead = 64

// budget is a token bucket: rate tokens a second, at most burst saved.
// It starts full.
type budget struct {
	rate, burst float64
	mu          sync.Mutex
	tokens      float64
	last        time.Time
}

// take spends n tokens if there are that many.
func (b *budget) take(n int, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last.IsZero() {
		b.tokens = b.burst
	} else {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < float64(n) {
		return false
	}
	b.tokens -= float64(n)
	return true
}

// pushNow sends msg to GossipNodes random live members, within budget.
// The budget is checked first, so an op over it (a bulk change) costs no
// pass over the member view; the members are then drawn by reservoir
// sampling in one pass, with no allocation proportional to N.
func (g *Gossip) pushNow(msg []byte) {
	ml := g.ml.Load()
	k := g.cfg.Memberlist.GossipNodes
	if ml == nil || k <= 0 {
		return
	}
	// Charged for k even when fewer members are alive: a cluster that
	// small has little need of the push.
	if !g.push.take(k, time.Now()) {
		g.m.IncrCounter([]string{"gossip", "push", "over_budget"}, 1)
		return
	}
	picked := make([]string, 0, k)
	seen := 0
	g.mu.Lock()
	for name, m := range g.members {
		if name == g.name || m.status != StatusAlive {
			continue
		}
		seen++
		if len(picked) < k {
			picked = append(picked, name)
		} else if j := rand.IntN(seen); j < k {
			picked[j] = name
		}
	}
	g.mu.Unlock()
	for _, name := range picked {
		if n := g.node(name); n != nil {
			_ = ml.SendBestEffort(n, msg)
		}
	}
	g.m.IncrCounter([]string{"gossip", "push", "sent"}, float32(len(picked)))
}
