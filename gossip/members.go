package gossip

import (
	"encoding/json"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"

	"github.com/namecast/namecast/routes"
)

// Status of a member as namecast reports it.
type Status string

const (
	StatusAlive Status = "alive"
	StatusDead  Status = "dead"
	StatusLeft  Status = "left"
)

// memberlist v0.7.0 has no public view of suspicion (the Node it hands out
// never has its State updated), so a suspect member is reported alive until
// it is declared dead.

// Member is one agent of the cluster as this agent sees it.
type Member struct {
	Name   string            `json:"name"`
	Addr   string            `json:"addr"`
	Status Status            `json:"status"`
	Tags   map[string]string `json:"tags"`
	// Since is when this agent saw the member take its status, on this
	// agent's clock: how long a dead member has been dead.
	Since time.Time `json:"since"`
}

type member struct {
	addr   string
	status Status
	// meta is the member's encoded tags as memberlist holds them (shared,
	// never written): every member holds every other, so a decoded map
	// per member was an N² cost, the largest in a big cluster's heap.
	// Members decodes them; inc is the one tag read on the hot paths.
	meta  []byte
	inc   uint64
	since time.Time
	coord *coordinate.Coordinate
	// held: declared dead, but answering, so its routes stay while it
	// refutes (withdraw.go). gen changes with every status change, so a
	// late confirmation acts only on the death it was started for.
	held bool
	gen  uint64
	// recorded: we held records of it when it last went down. Its return
	// at the same incarnation is asked about only then (see upsert).
	recorded bool
}

// events is Gossip's memberlist.EventDelegate. Departures drop the
// member's records: this is what replaces the NameServer's 120 s scanner.
type events Gossip

func (e *events) NotifyJoin(n *memberlist.Node) { (*Gossip)(e).upsert(n, false) }

// NotifyUpdate is a tag change. It does not revive a member that told us it
// is leaving (memberlist still has it alive until the leave spreads),
// unless the change is a new incarnation: the member has restarted.
func (e *events) NotifyUpdate(n *memberlist.Node) { (*Gossip)(e).upsert(n, true) }

// markLeft handles a member's own word that it is leaving: its records go
// now, not when memberlist's gossip of the leave arrives.
func (g *Gossip) markLeft(name string, inc uint64) {
	if name == g.name {
		return
	}
	g.fate.Lock()
	defer g.fate.Unlock()
	g.mu.Lock()
	m := g.members[name]
	if m == nil || m.status != StatusAlive || inc != 0 && m.inc > inc {
		g.mu.Unlock()
		return
	}
	m.status, m.since, m.held = StatusLeft, time.Now(), false
	g.down[name] = struct{}{}
	m.gen++
	delete(g.pending, name)
	mInc := m.inc
	g.mu.Unlock()
	g.withdrawLocked(name, max(inc, mInc))
	g.log.Info("member leaving", "member", name)
}

func (e *events) NotifyLeave(n *memberlist.Node) {
	g := (*Gossip)(e)
	g.fate.Lock()
	defer g.fate.Unlock()
	// A member we hold nothing of has no routes to keep while its death is
	// confirmed, so none is asked for: on an overloaded cluster every false
	// death sent the member, already too slow to answer probes, one TCP
	// connection from every other member at once (withdraw.go).
	_, holding := g.table.Entry(n.Name)
	g.mu.Lock()
	m := g.members[n.Name]
	if m == nil {
		m = &member{}
		g.members[n.Name] = m
	}
	status := StatusDead
	// memberlist reports our own leave too: we left, and our records stay
	// ours until the process exits.
	if m.status == StatusLeft || n.State == memberlist.StateLeft || n.Name == g.name {
		status = StatusLeft
	}
	m.addr, m.status, m.since, m.held = nodeAddr(n), status, time.Now(), false
	m.recorded = holding
	g.down[n.Name] = struct{}{}
	m.gen++
	gen, inc := m.gen, m.inc
	delete(g.pending, n.Name)
	// A death gossiped by others may be a stale verdict (a host that was
	// cut off passing on what it saw then): the routes stay while the
	// member proves it is alive (withdraw.go).
	hold := status == StatusDead && n.Name != g.name && holding && g.confirm(n.Name, m.addr, gen)
	m.held = hold
	g.mu.Unlock()
	if n.Name == g.name {
		return
	}
	g.coord.ForgetNode(n.Name)
	if !hold {
		g.withdrawLocked(n.Name, inc)
	}
	g.log.Info("member "+string(status), "member", n.Name, "addr", nodeAddr(n))
}

func (g *Gossip) upsert(n *memberlist.Node, update bool) {
	if g.notified != nil {
		g.notified(n.Name)
	}
	inc := metaInc(n.Meta)
	g.fate.Lock()
	defer g.fate.Unlock()
	g.mu.Lock()
	m := g.members[n.Name]
	// A new incarnation is a restart under the same name: memberlist may
	// report it as an update when it never saw the member go (its leave
	// gossip lost, its direct notice not), and it is alive.
	if update && m != nil && m.status == StatusLeft && m.inc == inc {
		g.mu.Unlock()
		return
	}
	joined := m == nil || m.status != StatusAlive
	// Whether to ask a member seen joining for what it holds: see askJoin.
	ask := joined && (m == nil || m.status == StatusLeft || m.inc != inc || m.recorded)
	if m == nil {
		m = &member{}
		g.members[n.Name] = m
	}
	held := m.held
	m.addr, m.status, m.meta, m.inc, m.held, m.recorded = nodeAddr(n), StatusAlive, n.Meta, inc, false, false
	delete(g.down, n.Name)
	if joined {
		m.since = time.Now()
		m.gen++
	}
	g.mu.Unlock()
	if n.Name == g.name {
		return
	}
	if g.table.Admit(n.Name, inc) {
		g.log.Info("member restarted; its previous records are served until its new incarnation settles them", "member", n.Name)
	}
	if held {
		g.m.IncrCounter([]string{"gossip", "deaths", "refuted"}, 1)
		g.log.Info("member refuted its death; its routes were kept", "member", n.Name)
	}
	if joined {
		g.table.Touch()
		g.log.Info("member joined", "member", n.Name, "addr", m.addr)
	}
	switch {
	case ask && g.askJoin.take(1, time.Now()):
		// Whatever it published before we saw it alive was refused; ask,
		// within budget (askJoinRate).
		if g.askedJoin != nil {
			g.askedJoin(n.Name)
		}
		g.submit(func() { g.sendSummary(n.Name) })
	case ask:
		g.m.IncrCounter([]string{"antientropy", "join_asks", "over_budget"}, 1)
	case joined:
		g.m.IncrCounter([]string{"antientropy", "join_asks", "skipped"}, 1)
	}
}

// A member seen joining is asked at once whether it holds records we
// lack (our summary goes to it; if they differ it answers with its
// digest): one we never saw, one back under a new incarnation (a
// restart) or from a leave, and one whose records we dropped when it
// went down. One back from a death at the same incarnation that held no
// records then is not asked. On an overloaded cluster false deaths are
// many and each is refuted in turn, so every member saw every other come
// back again and again, and asked each time, a measurable share of the
// cluster's CPU (docs/bench/history.md), almost all between members that
// hold no records. If such a member
// published while we held it dead, the ops we refused still reach us by
// the periodic anti-entropy: its summary, or that of any peer that took
// them, differs from ours at the next probe ack or summary tick. When a whole cluster starts, every member sees every other
// join, and asking each would be N² packets, as many as the alive
// messages themselves (at N=1,000, a million); so the asks are budgeted,
// and a member seen joining past the budget is compared by the periodic
// anti-entropy (one summary a second, and every probe's ack) instead,
// seconds later. One restart at a time, the case the ask is for, always
// fits.
const (
	askJoinRate  = 10 // asks per second, sustained
	askJoinBurst = 50
)

// alive reports whether origin's records may be applied and served: it is
// an alive member, or one whose death is being confirmed. Rules belong to
// no member and are always live.
func (g *Gossip) alive(origin string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.aliveLocked(origin)
}

// known reports whether memberlist ever told us of origin, alive or not
// (failed and departed members are remembered; viewrepair.go).
func (g *Gossip) known(origin string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.members[origin] != nil
}

// aliveLocked is alive for a caller holding g.mu.
func (g *Gossip) aliveLocked(origin string) bool {
	if origin == routes.RulesOrigin {
		return true
	}
	m := g.members[origin]
	return m != nil && (m.status == StatusAlive || m.held)
}

// Members lists every member known, including failed and departed ones
// still remembered for reconnection, sorted by name.
func (g *Gossip) Members() []Member {
	g.mu.Lock()
	out := make([]Member, 0, len(g.members))
	for name, m := range g.members {
		tags := map[string]string{}
		_ = json.Unmarshal(m.meta, &tags) // a member with unreadable tags is still a member
		out = append(out, Member{Name: name, Addr: m.addr, Status: m.status, Tags: tags, Since: m.since.UTC().Truncate(time.Millisecond)})
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AliveMembers counts members alive or suspect, us included.
func (g *Gossip) AliveMembers() int { return g.numMembers() }

func nodeAddr(n *memberlist.Node) string {
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// metaInc is the incarnation encoded tags announce, 0 if none or
// unreadable (a member with unreadable tags is still a member).
func metaInc(meta []byte) uint64 {
	var tags struct {
		Inc string `json:"inc"` // TagIncarnation
	}
	_ = json.Unmarshal(meta, &tags)
	inc, _ := strconv.ParseUint(tags.Inc, 10, 64)
	return inc
}
