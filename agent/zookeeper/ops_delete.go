package zookeeper

import (
	"strings"
	"time"

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
// cluster-wide at once; this agent's ephemeral records vanish here at once
// and elsewhere after DeleteHold unless re-created first; another agent's
// session's records vanish here at once and that agent is asked to
// withdraw them (commands.go). A node held only by another agent's HTTP
// registration cannot be deleted through ZooKeeper.
func (s *Server) delete(c *conn, xid int32, r *zkwire.PathVersion) int32 {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(code int32) int32 { c.reply(xid, code, nil); return code }
	// ZooKeeper's order: a path with no '/' or a NUL, or a special node;
	// the parent as spelled; the node; its version; its children.
	if !strings.Contains(r.Path, "/") || strings.IndexByte(r.Path, 0) >= 0 || special(r.Path) {
		return fail(zkwire.ErrBadArguments)
	}
	p := s.canon(r.Path)
	n := s.tree.nodes[p]
	switch {
	case s.tree.nodes[parentOf(p)] == nil, n == nil:
		return fail(zkwire.ErrNoNode)
	case r.Version != -1 && r.Version != n.version:
		return fail(zkwire.ErrBadVersion)
	case len(n.children) > 0:
		return fail(zkwire.ErrNotEmpty)
	}
	keys, held := s.holdersAt(p)
	var rules, local []string
	var remote []remoteHold
	var others []string // agents holding it otherwise than by a session (HTTP)
	for i, h := range held {
		switch st, owner := stampOwner(h.Rec); {
		case h.Origin == routes.RulesOrigin:
			rules = append(rules, keys[i])
		case h.Origin == s.local:
			local = append(local, keys[i])
		case owner != 0:
			remote = append(remote, remoteHold{origin: h.Origin, key: keys[i], stamp: st})
		default:
			others = append(others, h.Origin)
		}
	}
	if len(rules) == 0 && len(local) == 0 && len(remote) == 0 {
		s.log.Warn("delete refused: the znode was registered over HTTP on another agent, not by a ZooKeeper session; delete it there",
			"path", r.Path, "agents", others, "remote", c.remote)
		return fail(zkwire.ErrBadArguments)
	}
	if len(remote) > 0 {
		if code := s.deleteRemote(remote); code != zkwire.ErrOK {
			return fail(code)
		}
	}
	for _, k := range local {
		if sid := s.owners[k]; sid != 0 {
			if ss := s.sessions[sid]; ss != nil {
				delete(ss.keys, k)
				s.keysChangedLocked(ss) // before holdDelete withdraws it
			}
			delete(s.owners, k)
		}
		s.holdDelete(k)
	}
	if len(rules) > 0 {
		s.mu.Unlock()
		code := s.applyRules(nil, rules)
		s.mu.Lock()
		if code != zkwire.ErrOK {
			s.syncDirtyLocked()
			s.refresh(p)
			return fail(code)
		}
	}
	s.syncDirtyLocked()
	s.refresh(p)
	c.reply(xid, zkwire.ErrOK, nil)
	return zkwire.ErrOK
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
// service-name mappings, whose writers' sets are merged.
func (s *Server) setData(c *conn, xid int32, r *zkwire.SetDataRequest) int32 {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(code int32) int32 { c.reply(xid, code, nil); return code }
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
	if ephemeral && owner == nil {
		rec.Znode.Owner = n.owner
	}
	s.mu.Unlock()
	if ephemeral {
		s.reg.Apply([]routes.Record{rec}, nil)
	} else if code := s.applyRules([]routes.Record{rec}, nil); code != zkwire.ErrOK {
		s.mu.Lock()
		return fail(code)
	}
	s.mu.Lock()
	s.syncDirtyLocked()
	s.refresh(p)
	if n = s.tree.nodes[p]; n == nil {
		return fail(zkwire.ErrNoNode)
	}
	st := n.stat()
	c.reply(xid, zkwire.ErrOK, &st)
	return zkwire.ErrOK
}
