package gossip

import (
	"math/rand/v2"
	"time"
)

// reconnectLoop re-joins a recently failed member now and then. memberlist
// never contacts a member again once it declared it dead, so without this
// the two sides of a healed partition would stay apart (Serf's reconnect,
// with the same idea of forgetting after a timeout).
//
// Each tick tries with probability failed/alive (Serf's rule), so the
// cluster as a whole tries each failed member about once per interval,
// whatever its size. Trying on every tick, as each member once did, made
// an overloaded cluster spiral: false deaths there are many, each member
// re-joined one every 5 s, and each re-join of a member that is in fact
// alive is a full push/pull (every member's state, both ways) into a host
// already too slow to answer probes, many times memberlist's own
// push/pull rate (docs/bench/history.md). Two halves of a healed
// partition still try on every tick (failed/alive is 1 or more on the
// smaller side), so they merge as fast as before.
func (g *Gossip) reconnectLoop() {
	tick := time.NewTicker(g.cfg.ReconnectInterval)
	defer tick.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-tick.C:
			if addr := g.reconnectCandidate(time.Now()); addr != "" {
				if n, err := g.Join([]string{addr}); err == nil && n > 0 {
					g.log.Info("reconnected to failed member", "addr", addr)
				}
			}
		}
	}
}

// reconnectCandidate forgets members gone longer than ReconnectTimeout and,
// with probability failed/alive, picks a random failed one to try.
func (g *Gossip) reconnectCandidate(now time.Time) string {
	// Forgetting a member also clears its drop floor in the table: fate
	// keeps that in order with a concurrent return of the member.
	g.fate.Lock()
	defer g.fate.Unlock()
	g.mu.Lock()
	var failed, forgotten []string
	alive := len(g.members) - len(g.down) // us included, as in Serf
	for name := range g.down {
		m := g.members[name]
		if now.Sub(m.since) > g.cfg.ReconnectTimeout {
			delete(g.members, name)
			delete(g.down, name)
			forgotten = append(forgotten, name)
			continue
		}
		if m.status == StatusDead {
			failed = append(failed, m.addr)
		}
	}
	g.mu.Unlock()
	for _, name := range forgotten {
		g.table.Forget(name)
	}
	if len(failed) == 0 || rand.Float64() >= float64(len(failed))/float64(max(alive, 1)) {
		return ""
	}
	return failed[rand.IntN(len(failed))]
}
