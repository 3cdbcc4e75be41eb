package zookeeper

import (
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

// holdersAt lists the table records behind tree path p, with their keys.
func (s *Server) holdersAt(p string) (keys []string, held []routes.Held) {
	if u, _, ok := urlOfPath(p); ok {
		k := routes.URLKey(u.Interface, u.Category, u.URL)
		for _, h := range s.visible(k, s.table.Holders(k)) {
			keys, held = append(keys, k), append(held, h)
		}
		return keys, held
	}
	k := routes.ZnodeKey(p, "")
	for _, h := range s.visible(k, s.table.Holders(k)) {
		keys, held = append(keys, k), append(held, h)
	}
	if isSetPath(p) {
		for _, h := range s.table.RulesWithPrefix(routes.ZnodePartsPrefix(p)) {
			keys, held = append(keys, h.Rec.Key()), append(held, h)
		}
	}
	return keys, held
}

// delete answers delete. Rules (persistent znodes) are deleted
// cluster-wide at once; this agent's ephemeral records vanish here at once,
// and elsewhere at once too, or, if the deleting session connected or
// re-attached within RecreateWindow (a client re-registering after a
// reconnect), after DeleteHold unless re-created first; another agent's
// session's records vanish here at once and that agent is asked to
// withdraw them (commands.go). A node held only by another agent's HTTP
// registration cannot be deleted through ZooKeeper. The answer waits
// until the delete is on disk (answer).
func (s *Server) delete(c *conn, xid int32, r *zkwire.PathVersion) int32 {
	code, saving := s.deleteLocked(c, r)
	return s.answer(c, xid, code, nil, saving)
}

func (s *Server) deleteLocked(c *conn, r *zkwire.PathVersion) (int32, []lease.Saving) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writeLost(c) {
		return zkwire.ErrSessionExpired, nil
	}
	p, code := s.checkDelete(c, r.Path, r.Version, nil)
	if code != zkwire.ErrOK {
		return code, nil
	}
	code, _, saving := s.doDeletes([]deletion{s.planDelete(p)}, s.recreateLikely(c))
	return code, saving
}

// checkDelete is the error code a delete of clientPath with version would
// get, and its tree path. gone are tree paths an earlier delete of the same
// multi removes (nil outside multi). s.mu held.
func (s *Server) checkDelete(c *conn, clientPath string, version int32, gone map[string]bool) (string, int32) {
	// ZooKeeper's order: a path with no '/' or a NUL, or a special node;
	// the parent as spelled; the node; its version; its children.
	if !strings.Contains(clientPath, "/") || strings.IndexByte(clientPath, 0) >= 0 || special(clientPath) {
		return "", zkwire.ErrBadArguments
	}
	p := s.canon(clientPath)
	n := s.tree.nodes[p]
	switch {
	case s.tree.nodes[parentOf(p)] == nil || gone[parentOf(p)], n == nil || gone[p]:
		return p, zkwire.ErrNoNode
	case version != -1 && version != n.version:
		return p, zkwire.ErrBadVersion
	case len(n.children) > 0:
		for name := range n.children {
			if !gone[p+"/"+name] && !(p == "/" && gone["/"+name]) {
				return p, zkwire.ErrNotEmpty
			}
		}
	}
	rules, local, remote, others := s.deleteHolders(p)
	if len(rules) == 0 && len(local) == 0 && len(remote) == 0 {
		s.log.Warn("delete refused: the znode was registered over HTTP on another agent, not by a ZooKeeper session; delete it there",
			"path", clientPath, "agents", others, "remote", c.remote)
		return p, zkwire.ErrBadArguments
	}
	return p, zkwire.ErrOK
}

// deleteHolders sorts the records behind tree path p by how a delete
// removes them: rules, this agent's, other agents' sessions' (by command),
// and the agents holding it otherwise (HTTP), which it cannot. s.mu held.
func (s *Server) deleteHolders(p string) (rules, local []string, remote []remoteHold, others []string) {
	keys, held := s.holdersAt(p)
	for i, h := range held {
		switch st, owner := stampOwner(h.Rec); {
		case h.Origin == routes.RulesOrigin:
			rules = append(rules, keys[i])
		case h.Origin == s.local:
			local = append(local, keys[i])
		case owner != 0:
			remote = append(remote, remoteHold{origin: h.Origin, key: keys[i], stamp: st, lost: lostTo(h, held)})
		default:
			others = append(others, h.Origin)
		}
	}
	return rules, local, remote, others
}

// recreateLikely reports whether c's session connected or re-attached
// within RecreateWindow, so a re-create is likely to follow its deletes.
// s.mu held.
func (s *Server) recreateLikely(c *conn) bool {
	return c.sess != nil && time.Since(c.sess.attached) < s.cfg.RecreateWindow
}

// deletion is what a delete of one tree path, which checkDelete passed,
// removes: rules, this agent's records, and other agents' sessions'
// records (by command).
type deletion struct {
	path   string
	rules  []string
	local  []string
	remote []remoteHold
}

// planDelete is the deletion of tree path p. s.mu held.
func (s *Server) planDelete(p string) deletion {
	rules, local, remote, _ := s.deleteHolders(p)
	return deletion{path: p, rules: rules, local: local, remote: remote}
}

// doDeletes applies dels all or nothing. What must be saved first is:
// the lease of every session losing an ephemeral znode, written without
// it, all in one log entry (lease.Store.HoldAll), then the rules deleted
// and the commands to other agents, in one write. If the leases cannot
// be saved, nothing changed; if the rules cannot, the leases are put
// back (lease.Store.Undo, which cannot be refused: when the disk refuses
// it, the lease log takes nothing more until a snapshot of what is held
// is written), and nothing is applied. Either way the error code is
// returned with the index in dels of the first deletion the failed part
// belongs to. Then this agent's records are withdrawn, at once or, if
// hold, after DeleteHold. The caller waits for saving, with its locks
// let go, before it answers. s.mu and s.writeMu held; s.mu is released
// around the registry's writes.
func (s *Server) doDeletes(dels []deletion, hold bool) (code int32, at int, saving []lease.Saving) {
	type change struct {
		ss        *session
		old, keys map[string]struct{}
		at        int
	}
	var changes []*change
	bySession := map[*session]*change{}
	for i, d := range dels {
		for _, k := range d.local {
			ss := s.sessions[s.owners[k]]
			if ss == nil || ss.ended {
				continue
			}
			ch := bySession[ss]
			if ch == nil {
				ch = &change{ss: ss, old: ss.keys, keys: maps.Clone(ss.keys), at: i}
				bySession[ss] = ch
				changes = append(changes, ch)
			}
			delete(ch.keys, k)
		}
	}
	if len(changes) > 0 {
		cs := make([]lease.Change, len(changes))
		undo := make([]lease.Change, len(changes))
		sets, unsets := make([]func(), len(changes)), make([]func(), len(changes))
		first := len(dels)
		for j, ch := range changes {
			kc := s.keysChange(ch.ss, ch.keys)
			cs[j], sets[j] = kc.Change, kc.set
			kc = s.keysChange(ch.ss, ch.old)
			undo[j], unsets[j] = kc.Change, kc.set
			first = min(first, ch.at)
		}
		sv, err := s.reg.HoldAll(cs)
		if err != nil {
			s.log.Error("delete refused: it could not be saved to the data dir", "path", dels[first].path, "sessions", len(changes), "err", err)
			return zkwire.ErrSystem, first, nil
		}
		saving = append(saving, sv)
		for _, set := range sets {
			set()
		}
		defer func() {
			if code == zkwire.ErrOK {
				return
			}
			// The rest was refused: the sessions' leases go back as they
			// were, with their znodes, which stay. The answer waits for
			// that, not for the refused change.
			sv, err := s.reg.Undo(undo)
			if err != nil {
				s.log.Error("a refused delete's leases could not be saved back; until the data dir takes the snapshot it now needs, a restart would lose the znodes that stay",
					"path", dels[first].path, "sessions", len(changes), "err", err)
			}
			saving = []lease.Saving{sv}
			for _, unset := range unsets {
				unset()
			}
		}()
	}
	var puts []routes.Record
	var ruleDeletes []string
	var remote []remoteHold
	rulesAt := -1
	for i, d := range dels {
		if rulesAt < 0 && len(d.rules)+len(d.remote) > 0 {
			rulesAt = i
		}
		puts = append(puts, commandsFor(d.remote)...)
		ruleDeletes = append(ruleDeletes, d.rules...)
		remote = append(remote, d.remote...)
	}
	if rulesAt >= 0 {
		s.mu.Unlock()
		code := s.applyRules(puts, ruleDeletes)
		s.mu.Lock()
		if code != zkwire.ErrOK {
			return code, rulesAt, saving
		}
		s.suppress(remote)
	}
	var now []string
	for _, d := range dels {
		for _, k := range d.local {
			delete(s.owners, k)
			if hold {
				s.holdDelete(k)
				continue
			}
			if h := s.hidden[k]; h != nil {
				h.timer.Stop()
				delete(s.hidden, k)
			}
			now = append(now, k)
		}
	}
	if len(now) > 0 {
		s.mu.Unlock()
		s.reg.Apply(nil, now)
		s.mu.Lock()
	}
	s.syncDirtyLocked()
	for _, d := range dels {
		s.refresh(d.path)
	}
	return zkwire.ErrOK, 0, saving
}

// holdDelete hides our record at key from this agent's view now and
// withdraws it from the table after DeleteHold, unless a create re-adds it
// first. s.mu and s.writeMu held.
func (s *Server) holdDelete(key string) {
	if h := s.hidden[key]; h != nil {
		h.timer.Stop()
	}
	h := &heldDelete{}
	h.timer = time.AfterFunc(s.cfg.DeleteHold, func() { s.releaseDelete(key, h) })
	s.hidden[key] = h
}

// heldDelete is one delete waiting out DeleteHold; its identity tells the
// timer whether it is still the current one.
type heldDelete struct{ timer *time.Timer }

func (s *Server) releaseDelete(key string, t *heldDelete) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if s.hidden[key] != t || s.closed {
		s.mu.Unlock()
		return
	}
	delete(s.hidden, key)
	s.mu.Unlock()
	s.reg.Apply(nil, []string{key})
	s.syncDirty()
}

// setData answers setData. The version check runs against this agent's
// view; across agents the last writer wins (spec §5.3), except on
// service-name mappings, whose writers' sets are merged. The answer waits
// until the change is on disk (answer).
func (s *Server) setData(c *conn, xid int32, r *zkwire.SetDataRequest) int32 {
	code, body, sv := s.setDataLocked(c, r)
	return s.answer(c, xid, code, body, []lease.Saving{sv})
}

func (s *Server) setDataLocked(c *conn, r *zkwire.SetDataRequest) (int32, zkwire.Record, lease.Saving) {
	s.writeMu.Lock()
	s.mu.Lock()
	locked := true
	unlock := func() { locked = false; s.mu.Unlock(); s.writeMu.Unlock() }
	defer func() {
		if locked {
			unlock()
		}
	}()
	var sv lease.Saving
	fail := func(code int32) (int32, zkwire.Record, lease.Saving) { return code, nil, sv }
	if s.writeLost(c) {
		return fail(zkwire.ErrSessionExpired)
	}
	if !validPath(r.Path) {
		return fail(zkwire.ErrBadArguments)
	}
	p := s.canon(r.Path)
	n := s.tree.nodes[p]
	switch {
	case n == nil:
		return fail(zkwire.ErrNoNode)
	case p == configPath:
		return fail(zkwire.ErrNoAuth) // read-only, as ZooKeeper's ACL on it
	case r.Version != -1 && r.Version != n.version:
		return fail(zkwire.ErrBadVersion)
	case n.url:
		s.log.Warn("setData refused: a Dubbo URL znode is a registration, its data is not kept", "path", r.Path, "remote", c.remote)
		return fail(zkwire.ErrBadArguments)
	}
	_, held := s.holdersAt(p)
	ephemeral, ours := false, true
	var owner *session
	if n.explicit && !n.persisted && !isSetPath(p) {
		ephemeral = true
		ours = len(held) > 0 && pick(held).Origin == s.local
		owner = s.sessions[n.owner]
	}
	if !ours {
		s.log.Warn("setData refused: the znode is an ephemeral node of another agent's session", "path", r.Path, "remote", c.remote)
		return fail(zkwire.ErrBadArguments)
	}
	rec := s.recordFor(p, p, r.Data, n.version+1, n.ctime, ephemeral, owner)
	if rec.Znode != nil && len(held) > 0 && !isSetPath(p) {
		rec.Znode.Replaces = recordStamp(pick(held).Rec) // the base this write was made over
	}
	if ephemeral && owner == nil {
		rec.Znode.Owner = n.owner
	}
	if ephemeral && owner != nil && !owner.ended {
		// The session's lease is written with the new data before it is
		// applied, and on disk before the answer, or a kill -9 after the
		// answer would restart with the old data; a setData that cannot
		// be saved changes nothing.
		w := s.sessionWrite(owner, []routes.Record{rec}, nil)
		var code int32
		var body zkwire.Record
		err := s.reg.Write(func() {
			s.noteWriteLocked(owner, w)
			code, body = s.setDoneLocked(c, p)
			unlock()
		}, w)
		switch {
		case err == nil:
			return code, body, sv
		case errors.Is(err, host.ErrUnsaved):
			s.log.Error("a change could not be saved to the data dir; answered SYSTEMERROR", "remote", c.remote, "err", err)
			return zkwire.ErrSystem, nil, sv
		case errors.Is(err, routes.ErrBudget):
			return fail(zkwire.ErrQuotaExceeded) // larger data past the record budget
		}
		s.log.Error("setData refused: it could not be saved to the data dir", "path", r.Path, "session", hexID(owner.id), "err", err)
		return fail(zkwire.ErrSystem)
	}
	casKey := ""
	if !ephemeral && r.Version != -1 && rec.Znode != nil && !isSetPath(p) {
		casKey = rec.Key()
		s.noteCASWrite(casKey, c.sess, rec)
	}
	s.mu.Unlock()
	if ephemeral {
		if _, err := s.reg.Apply([]routes.Record{rec}, nil); err != nil {
			s.mu.Lock()
			return fail(zkwire.ErrQuotaExceeded)
		}
	} else if code := s.applyRules([]routes.Record{rec}, nil); code != zkwire.ErrOK {
		s.mu.Lock()
		if w, ok := s.casWrites[casKey]; ok && w.stamp == rec.Znode.Stamp {
			delete(s.casWrites, casKey)
		}
		return fail(code)
	}
	s.mu.Lock()
	code, body := s.setDoneLocked(c, p)
	return code, body, sv
}

// setDoneLocked is a setData's answer once applied: the tree refreshed
// at tree path p. s.mu held.
func (s *Server) setDoneLocked(c *conn, p string) (int32, zkwire.Record) {
	s.syncDirtyLocked()
	s.refresh(p)
	n := s.tree.nodes[p]
	if n == nil {
		return zkwire.ErrNoNode, nil
	}
	if c.sess != nil && c.sess.lost {
		return zkwire.ErrSessionExpired, nil // a conflicting write seen meanwhile won (conflicts.go)
	}
	st := n.stat()
	return zkwire.ErrOK, &st
}
