package zookeeper

import (
	"strings"

	"github.com/namecast/namecast/routes"
)

// Conflicts between agents. No consensus orders writes, so two sessions
// on two agents can both be answered OK for writes that ZooKeeper would
// have refused one of: two creates of one ephemeral path, or two
// setData calls with the same expected version. Every agent shows the
// same winner (pick for a path's records, last writer wins for rules);
// the loser learns it lost in ZooKeeper's own terms: its agent expires
// its session, as a ZooKeeper server would after a partition, so a lock
// or leader recipe gives up what it thought it held and Dubbo re-creates
// its nodes. It happens as soon as the winning record reaches the
// loser's agent (the refresh of the path), and any write the losing
// session sends from then on answers SESSIONEXPIRED and changes
// nothing: its delete never removes the winner's node.
//
// A record tells a conflict from a write that saw the other's through
// routes.Znode.Replaces: the stamp of the record its writer's agent
// wrote over. A create after a delete through another agent (Dubbo's
// and curator-x-discovery's delete-and-re-create on NODEEXISTS) replaces
// the record it deleted, and expires nobody; a setData replaces its base.
//
//   - An ephemeral znode of a session here is shown under another agent's
//     record that does not replace it: the session lost a create race.
//   - A versioned setData through this agent is replaced, in the table,
//     by a write of the same version, or of the next version written over
//     another base: it lost a compare-and-set race.
//
// Where both values are kept nobody lost: service-name mappings merge
// every writer's part (isSetPath), and two sessions registering one
// Dubbo URL registered the same thing (URL leaves are left out). A
// record registered over HTTP (no session) never expires a session.
//
// A delete through an agent that knows both records (the winner's own,
// after its session let go) tells the loser's agent its record lost
// (commands.go, op "lost"), so the loser is expired even when the
// winner's node came and went before the loser's agent saw it.
//
// What remains (docs/protocols/zookeeper-wire.md §7.7): until the
// winning record (or that "lost") reaches the loser's agent (gossip:
// milliseconds on a LAN, the length of a partition), both sessions act
// on their own answer; a winner that goes without a delete (its session
// ends) before the loser's agent saw it leaves the loser holding the
// path; and a setData overtaken by two or more later writes before its
// agent sees any of them is not detected.

// casWrite is the last versioned setData through this agent on a
// persistent znode, kept until another write replaces it.
type casWrite struct {
	sid     int64
	stamp   uint64
	version int32
}

// writeLost reports whether c's session lost a conflict, after
// refreshing what gossip changed (so a winning record already in the
// table is seen): its writes answer SESSIONEXPIRED. s.mu held.
func (s *Server) writeLost(c *conn) bool {
	s.syncDirtyLocked()
	return c.sess != nil && c.sess.lost
}

// checkConflicts looks for a session of this agent that lost a conflict
// at tree path p, whose records just changed. s.mu held.
func (s *Server) checkConflicts(p string) {
	if _, _, ok := urlOfPath(p); ok || isSetPath(p) {
		return
	}
	key := routes.ZnodeKey(p, "")
	s.checkCreateLost(p, key)
	s.checkWriteLost(p, key)
}

// checkCreateLost expires the session here whose ephemeral znode at key
// another agent's record outranks without replacing it. s.mu held.
func (s *Server) checkCreateLost(p, key string) {
	sid := s.owners[key]
	ss := s.sessions[sid]
	if sid == 0 || ss == nil || ss.ended || ss.lost || s.hidden[key] != nil {
		return
	}
	mine, ok := s.table.LocalRecord(key)
	if !ok || mine.Znode == nil || mine.Znode.Owner != sid {
		return
	}
	held := s.visible(key, s.table.Holders(key))
	if len(held) == 0 {
		return
	}
	w := pick(held)
	z := w.Rec.Znode
	if w.Origin == s.local || z == nil || z.Replaces == mine.Znode.Stamp {
		return
	}
	if w.Origin != routes.RulesOrigin && z.Owner == routes.OriginOwner(w.Origin) {
		return // registered over HTTP: no session to have raced
	}
	s.lose(ss, "create", p, w.Origin)
}

// lostTo reports whether h, another agent's session's ephemeral znode,
// is hidden under a record of held that outranks it without replacing
// it: it lost a create race (a delete here then tells its agent so,
// commands.go). s.mu held.
func lostTo(h routes.Held, held []routes.Held) bool {
	w := pick(held)
	if h.Rec.Znode == nil || w.Origin == h.Origin || isSetPath(h.Rec.Znode.Path) {
		return false
	}
	z := w.Rec.Znode
	if z == nil || z.Replaces == h.Rec.Znode.Stamp {
		return false
	}
	return w.Origin == routes.RulesOrigin || z.Owner != routes.OriginOwner(w.Origin)
}

// checkWriteLost expires the session whose versioned setData at key was
// replaced by a write that did not see it. s.mu held.
func (s *Server) checkWriteLost(p, key string) {
	w, ok := s.casWrites[key]
	if !ok {
		return
	}
	cur, ok := s.table.Rule(key)
	if !ok || cur.Znode == nil {
		delete(s.casWrites, key) // deleted: nothing left to lose
		return
	}
	z := cur.Znode
	if z.Stamp == w.stamp && strings.HasPrefix(s.table.RuleWriter(key), s.local+"@") {
		return // still the value shown
	}
	delete(s.casWrites, key)
	lost := z.Version == w.version || (z.Version == w.version+1 && z.Replaces != w.stamp)
	if ss := s.sessions[w.sid]; lost && ss != nil && !ss.ended && !ss.lost {
		s.lose(ss, "setData", p, "")
	}
}

// noteCASWrite remembers a versioned setData of a persistent znode
// through this agent, to be checked as other writes arrive. s.mu held.
func (s *Server) noteCASWrite(key string, ss *session, rec routes.Record) {
	if ss == nil || rec.Znode == nil {
		return
	}
	s.casWrites[key] = casWrite{sid: ss.id, stamp: rec.Znode.Stamp, version: rec.Znode.Version}
}

// lose expires ss, which lost a conflict at p (what: "create" or
// "setData"), on a goroutine of its own: s.mu is held, and expiry takes
// the write lock. Its writes answer SESSIONEXPIRED from now on
// (writeLost). s.mu held.
func (s *Server) lose(ss *session, what, p, winner string) {
	if s.closed {
		return
	}
	ss.lost = true
	s.stats.conflictsLost(what).Add(1)
	s.log.Warn("session expired: its "+what+" conflicted with one through another agent, which won everywhere (no consensus refused one of them)",
		"path", p, "session", hexID(ss.id), "winner_agent", winner)
	s.wg.Go(func() {
		s.expire(ss, "lost a conflicting "+what)
		s.mu.Lock()
		c := ss.conn
		s.mu.Unlock()
		if c != nil {
			c.close() // the client learns of the expiry when it reconnects
		}
	})
}
