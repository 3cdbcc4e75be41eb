package zookeeper

import (
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// read answers exists, getData, getChildren and getChildren2, arming the
// watch in the same critical section as the read (spec §3.6).
func (s *Server) read(c *conn, h zkwire.RequestHeader, r *zkwire.PathWatch) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	// No path check: ZooKeeper looks an invalid path up like any other
	// and answers NONODE.
	p := s.canon(r.Path)
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
	// The bodies are the connection's scratch records: replyShared
	// encodes them before it returns.
	switch h.Type {
	case zkwire.OpExists:
		c.st = n.stat()
		c.reply(h.Xid, zkwire.ErrOK, &c.st)
	case zkwire.OpGetData:
		c.data = zkwire.GetDataResponse{Data: n.data, Stat: n.stat()}
		c.reply(h.Xid, zkwire.ErrOK, &c.data)
		c.data.Data = nil
	case zkwire.OpGetChildren:
		c.replyShared(h.Xid, zkwire.ErrOK, n.childrenEncoded(), nil)
	default:
		c.st = n.stat()
		c.replyShared(h.Xid, zkwire.ErrOK, n.childrenEncoded(), &c.st)
	}
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
		p := s.canon(cp)
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
		p := s.canon(cp)
		if s.tree.nodes[p] != nil {
			c.notify(zkwire.EventNodeCreated, cp, s.zxid)
		} else {
			ok = s.arm(c, watchData, p, cp) && ok
		}
	}
	for _, cp := range r.Child {
		p := s.canon(cp)
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
		ok = s.arm(c, watchPersistent, s.canon(cp), cp) && ok
	}
	for _, cp := range r.Recursive {
		ok = s.arm(c, watchRecursive, s.canon(cp), cp) && ok
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
	p := s.canon(r.Path)
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
		if s.watching(c, k, p, r.Path) {
			found = true
			if h.Type == zkwire.OpRemoveWatches {
				s.disarm(c, k, p, r.Path)
			}
		}
	}
	if !found {
		code = zkwire.ErrNoWatcher
	}
	c.reply(h.Xid, code, nil)
	return code
}
