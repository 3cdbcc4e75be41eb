package gossip

import (
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// Withdrawing a member's routes.
//
// A member that left, or that our own failure detector gave up on, has its
// records dropped at once. But memberlist takes any member's word that a
// member is dead: after a partition heals, a host that was cut off passes
// on the verdicts it reached alone, about members the rest never lost, and
// every agent would drop a live member's routes until it refutes (tens of
// milliseconds, or more under load). So a death is confirmed first, by the
// member's own answer: one TCP connection to it (a summary, useful anyway)
// and, at the same time, confirmPings of memberlist's pings, which only
// the member of that name acks. A crashed process refuses the connection
// at once, so a crash is withdrawn as fast as before. An accepted
// connection proves nothing: the kernel accepts for a process stopped with
// SIGSTOP, or too wedged to run, as well. So the member must ack a ping
// within ProbeTimeout, the bound memberlist's own probes give a live
// member; a hung one is withdrawn when that runs out, a host that is down
// or cut off likewise. A member that acks keeps its routes (held) while it
// refutes, which memberlist makes it do as soon as the verdict reaches it;
// if it has not refuted within refuteWait, memberlist's view wins and the
// routes go.
//
// Only a member we hold records of is checked: for one we hold nothing of
// there is nothing to keep, and on an overloaded cluster, where false
// deaths are many, each check is one TCP connection from every member to
// one that is already too slow to answer probes (docs/bench/history.md
// counts them).
//
// The sweeper is the second line: every anti-entropy tick, records of an
// origin that is neither alive nor held are dropped, so whatever a race
// left behind is served for at most one interval.

// confirmPings is how many pings a death check sends at once: the member
// answers if any is acked, so one lost packet does not withdraw a live
// member's routes.
const confirmPings = 2

// refuteWait is how many probe intervals a member that answered our
// confirmation may take to refute its death.
const refuteWait = 5

type deathCheck struct {
	name, addr string
	gen        uint64
}

// confirm queues a check of member name's death; false means none can be
// made (not running, or too many at once) and the routes go now. It is
// called with g.mu held, so it does not block.
func (g *Gossip) confirm(name, addr string, gen uint64) bool {
	if g.ml.Load() == nil {
		return false
	}
	select {
	case <-g.stop:
		return false
	case g.checks <- deathCheck{name: name, addr: addr, gen: gen}:
		return true
	default:
		return false
	}
}

// confirmLoop runs each check on its own goroutine, owned by Shutdown, so
// a partition that kills many members at once is confirmed in parallel.
func (g *Gossip) confirmLoop() {
	for {
		select {
		case <-g.stop:
			return
		case c := <-g.checks:
			g.goLoop(func() { g.confirmDeath(c) })
		}
	}
}

func (g *Gossip) confirmDeath(c deathCheck) {
	n := nodeAt(c.name, c.addr)
	if n == nil {
		g.withdrawHeld(c, "no address")
		return
	}
	ml := g.ml.Load()
	msg := encode(msgSummary, summary{From: g.name, Sum: g.liveSummary()})
	if g.sentConfirm != nil {
		g.sentConfirm(c.name)
	}
	// Both may outlive the wait below: the send by up to TCPTimeout, the
	// pings by ProbeTimeout.
	refused := make(chan error, 1)
	g.goLoop(func() { refused <- ml.SendReliable(n, msg) })
	acked := make(chan error, confirmPings)
	to := &net.UDPAddr{IP: n.Addr, Port: int(n.Port)}
	for range confirmPings {
		g.goLoop(func() {
			_, err := ml.Ping(c.name, to)
			acked <- err
		})
	}
	wait := time.NewTimer(g.cfg.Memberlist.ProbeTimeout)
	defer wait.Stop()
	pending := confirmPings
confirming:
	for {
		select {
		case <-g.stop:
			return
		case <-wait.C:
			g.withdrawHeld(c, "no answer")
			return
		case err := <-refused:
			if err != nil {
				g.withdrawHeld(c, "refused")
				return
			}
			// Accepted, which proves nothing: the kernel accepts for a
			// stopped process too.
		case err := <-acked:
			if err == nil {
				break confirming
			}
			if pending--; pending == 0 {
				g.withdrawHeld(c, "no answer")
				return
			}
		}
	}
	g.m.IncrCounter([]string{"gossip", "deaths", "contradicted"}, 1)
	g.log.Info("member declared dead answers; keeping its routes while it refutes", "member", c.name)
	// Checked every half probe interval, so the goroutine ends soon after
	// the member refutes.
	tick := time.NewTicker(g.cfg.Memberlist.ProbeInterval / 2)
	defer tick.Stop()
	refute := time.NewTimer(refuteWait * g.cfg.Memberlist.ProbeInterval)
	defer refute.Stop()
	for g.stillHeld(c) {
		select {
		case <-g.stop:
			return
		case <-refute.C:
			g.withdrawHeld(c, "not refuted")
			return
		case <-tick.C:
		}
	}
}

// stillHeld reports whether the death c checks is still the member's
// current status, with its routes held.
func (g *Gossip) stillHeld(c deathCheck) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := g.members[c.name]
	return m != nil && m.gen == c.gen && m.held
}

// withdrawHeld drops a held member's records, unless its status changed
// since the check began (it refuted, or a later death took over).
func (g *Gossip) withdrawHeld(c deathCheck, why string) {
	g.fate.Lock()
	defer g.fate.Unlock()
	g.mu.Lock()
	m := g.members[c.name]
	if m == nil || m.gen != c.gen || !m.held {
		g.mu.Unlock()
		return
	}
	m.held = false
	inc := m.inc
	g.mu.Unlock()
	g.log.Debug("death confirmed", "member", c.name, "how", why)
	g.withdrawLocked(c.name, inc)
}

// withdrawLocked drops origin's records, refusing its incarnations up to
// inc from now on. g.fate must be held.
func (g *Gossip) withdrawLocked(origin string, inc uint64) {
	if g.table.DropOrigin(origin, inc) {
		g.m.IncrCounter([]string{"gossip", "origins", "dropped"}, 1)
	}
	g.table.Touch()
}

// sweep drops the records of every origin that is no longer alive (nor
// held): the second line behind the drop floors.
func (g *Gossip) sweep() {
	for _, o := range g.table.Origins() {
		if o == g.name || o == routes.RulesOrigin || g.alive(o) {
			continue
		}
		g.fate.Lock()
		if !g.alive(o) {
			g.mu.Lock()
			var inc uint64
			if m := g.members[o]; m != nil {
				inc = m.inc
			}
			g.mu.Unlock()
			if g.table.DropOrigin(o, inc) {
				g.m.IncrCounter([]string{"gossip", "origins", "swept"}, 1)
				g.log.Warn("swept the records of an origin that is not a live member", "origin", o)
				g.table.Touch()
			}
		}
		g.fate.Unlock()
	}
}

// nodeAt builds a node to send to from a recorded address (see nodes.go).
func nodeAt(name, addr string) *memberlist.Node {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	p, err := strconv.ParseUint(port, 10, 16)
	ip := net.ParseIP(host)
	if err != nil || ip == nil {
		return nil
	}
	// PMax tells memberlist the peer checks CRCs; every namecast agent runs
	// this memberlist version.
	return &memberlist.Node{Name: name, Addr: ip, Port: uint16(p), PMax: memberlist.ProtocolVersionMax}
}
