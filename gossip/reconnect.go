package gossip

import (
	"math/rand/v2"
	"time"
)

// reconnectLoop re-joins one recently failed member per interval.
// memberlist never contacts a member again once it declared it dead, so
// without this the two sides of a healed partition would stay apart
// (Serf's reconnect, with the same idea of forgetting after a timeout).
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

// reconnectCandidate forgets members gone longer than ReconnectTimeout and
// picks a random failed one to try.
func (g *Gossip) reconnectCandidate(now time.Time) string {
	// Forgetting a member also clears its drop floor in the table: fate
	// keeps that in order with a concurrent return of the member.
	g.fate.Lock()
	defer g.fate.Unlock()
	g.mu.Lock()
	var failed, forgotten []string
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
	if len(failed) == 0 {
		return ""
	}
	return failed[rand.IntN(len(failed))]
}
