package gossip

import (
	"encoding/json"
	"strconv"
	"time"
)

// An agent's incarnation must end above anything the cluster remembers for
// its name, or every peer keeps the previous run's records and refuses the
// new ones as stale. The agent starts from its clock (or its data dir),
// which may be behind a previous run's: a clock stepped back, or the name
// moved to a host whose clock is behind, and the agent is back before its
// old incarnation is declared dead. So, as memberlist refutes for its own
// incarnation, an agent that sees its own name at a higher incarnation in a
// peer's digest (exchanged at join by push/pull, and on every anti-entropy
// difference), a relayed op or a notice takes the next one above it: its
// records are then the newest, and peers drop the old ones (their tags say
// so) and pull the new from it.

// noteOwnIncarnation handles a peer's word that it holds records of our
// name at incarnation inc.
func (g *Gossip) noteOwnIncarnation(inc uint64) {
	now, ok := g.table.Reincarnate(inc)
	if !ok {
		return
	}
	meta := metaFor(g.cfg.Tags, now)
	g.meta.Store(&meta)
	g.m.IncrCounter([]string{"gossip", "incarnation", "raised"}, 1)
	g.log.Warn("a previous run of this agent had a higher incarnation (its clock was ahead); taking one above it",
		"previous", inc, "incarnation", now)
	if g.cfg.Reincarnated != nil {
		g.cfg.Reincarnated(now)
	}
	g.announce(g.name)
	g.submit(func() {
		if ml := g.ml.Load(); ml != nil {
			_ = ml.UpdateNode(time.Second)
		}
	})
}

// metaFor encodes our tags with incarnation inc.
func metaFor(tags map[string]string, inc uint64) []byte {
	t := make(map[string]string, len(tags)+1)
	for k, v := range tags {
		t[k] = v
	}
	t[TagIncarnation] = strconv.FormatUint(inc, 10)
	b, _ := json.Marshal(t)
	return b
}
