package zookeeper

import (
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// read answers exists, getData, getChildren and getChildren2, arming the
// watch in the same critical section as the read (spec §3.6).
func (s *Server) read(c *conn, h zkwire.RequestHeader, r *zkwire.PathWatch) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !validPath(r.Path) {
		c.reply(h.Xid, zkwire.ErrBadArguments, nil)
		return zkwire.ErrBadArguments
	}
	p := canonical(r.Path)
	n := s.tree.nodes[p]
	if h.Type == zkwire.OpExists && r.Watch {
		// Armed even when the node is missing: it then fires NodeCreated.
		if !s.arm(c, watchData, p, r.Path) {
			c.reply(h.Xid, zkwire.ErrSystem, nil)
			return zkwire.ErrSystem
		}
	}
	if n == nil {
		c.reply(h.Xid, zkwire.ErrNoNode, nil)
		return zkwire.ErrNoNode
	}
	if r.Watch && h.Type != zkwire.OpExists {
		kind := watchData
		if h.Type == zkwire.OpGetChildren || h.Type == zkwire.OpGetChildren2 {
			kind = watchChild
		}
		if !s.arm(c, kind, p, r.Path) {
			c.reply(h.Xid, zkwire.ErrSystem, nil)
			return zkwire.ErrSystem
		}
	}
	var body zkwire.Record
	switch h.Type {
	case zkwire.OpExists:
		st := n.stat()
		body = &st
	case zkwire.OpGetData:
		body = &zkwire.GetDataResponse{Data: n.data, Stat: n.stat()}
	case zkwire.OpGetChildren:
		body = &zkwire.ChildrenResponse{Children: n.childNames()}
	default:
		body = &zkwire.ChildrenResponse{Children: n.childNames(), Stat: n.stat(), WithStat: true}
	}
	c.reply(h.Xid, zkwire.ErrOK, body)
	return zkwire.ErrOK
}

// setWatches re-arms the watches of a re-attached session (spec §3.5):
// a watch whose node changed since relativeZxid fires at once instead.
// A relativeZxid above anything this agent issued comes from another
// agent or an earlier run, where zxids mean nothing here: every listed
// watch is then treated as changed, a spurious event being harmless and a
// missed one not.
func (s *Server) setWatches(c *conn, xid int32, r *zkwire.SetWatches) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	foreign := r.RelativeZxid > s.zxid
	rel := r.RelativeZxid
	ok := true
	for _, cp := range r.Data {
		p := canonical(cp)
		switch n := s.tree.nodes[p]; {
		case n == nil:
			c.notify(zkwire.EventNodeDeleted, cp, s.zxid)
		case foreign || n.mzxid > rel:
			c.notify(zkwire.EventNodeDataChanged, cp, s.zxid)
		default:
			ok = s.arm(c, watchData, p, cp) && ok
		}
	}
	for _, cp := range r.Exist {
		p := canonical(cp)
		if s.tree.nodes[p] != nil {
			c.notify(zkwire.EventNodeCreated, cp, s.zxid)
		} else {
			ok = s.arm(c, watchData, p, cp) && ok
		}
	}
	for _, cp := range r.Child {
		p := canonical(cp)
		switch n := s.tree.nodes[p]; {
		case n == nil:
			c.notify(zkwire.EventNodeDeleted, cp, s.zxid)
		case foreign || n.pzxid > rel:
			c.notify(zkwire.EventNodeChildrenChanged, cp, s.zxid)
		default:
			ok = s.arm(c, watchChild, p, cp) && ok
		}
	}
	for _, cp := range r.Persistent {
		ok = s.arm(c, watchPersistent, canonical(cp), cp) && ok
	}
	for _, cp := range r.Recursive {
		ok = s.arm(c, watchRecursive, canonical(cp), cp) && ok
	}
	code := zkwire.ErrOK
	if !ok {
		code = zkwire.ErrSystem
	}
	c.reply(xid, code, nil)
	return code
}

// watchOp answers addWatch, checkWatches and removeWatches.
func (s *Server) watchOp(c *conn, h zkwire.RequestHeader, r *zkwire.PathMode) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	code := zkwire.ErrOK
	if !validPath(r.Path) {
		code = zkwire.ErrBadArguments
		c.reply(h.Xid, code, nil)
		return code
	}
	p := canonical(r.Path)
	if h.Type == zkwire.OpAddWatch {
		kind := watchPersistent
		switch r.Mode {
		case zkwire.AddWatchPersistent:
		case zkwire.AddWatchPersistentRecursive:
			kind = watchRecursive
		default:
			code = zkwire.ErrBadArguments
		}
		if code == 0 && !s.arm(c, kind, p, r.Path) {
			code = zkwire.ErrSystem
		}
		// The Java client reads a 4-byte ErrorResponse on success.
		c.reply(h.Xid, code, &zkwire.ErrorResponse{})
		return code
	}
	var kinds []watchKind
	switch r.Mode {
	case zkwire.WatcherChildren:
		kinds = []watchKind{watchChild}
	case zkwire.WatcherData:
		kinds = []watchKind{watchData}
	case zkwire.WatcherAny:
		kinds = []watchKind{watchChild, watchData, watchPersistent, watchRecursive}
	case zkwire.WatcherPersistent:
		kinds = []watchKind{watchPersistent}
	case zkwire.WatcherPersistentRecursive:
		kinds = []watchKind{watchRecursive}
	default:
		c.reply(h.Xid, zkwire.ErrBadArguments, nil)
		return zkwire.ErrBadArguments
	}
	found := false
	for _, k := range kinds {
		if _, ok := c.watches[watchKey{k, p}]; ok {
			found = true
			if h.Type == zkwire.OpRemoveWatches {
				s.disarm(c, k, p)
			}
		}
	}
	if !found {
		code = zkwire.ErrNoWatcher
	}
	c.reply(h.Xid, code, nil)
	return code
}
