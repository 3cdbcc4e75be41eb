package zookeeper

import (
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// watchKind is one of the server's watch tables (spec §3.1).
type watchKind uint8

const (
	watchData       watchKind = iota // getData and exists, one-shot
	watchChild                       // getChildren(2), one-shot
	watchPersistent                  // addWatch mode 0: data and child, kept
	watchRecursive                   // addWatch mode 1: the path and below, kept
	numWatchKinds
)

type watchKey struct {
	kind watchKind
	path string // the tree (canonical) path
}

// watchTable holds every armed watch of this agent: per kind, per tree
// path, the connections watching and the path each asked with (the one its
// notification must carry). One entry per (kind, path, connection), as in
// ZooKeeper: a client watching twice gets one event. s.mu guards it.
type watchTable struct {
	m [numWatchKinds]map[string]map[*conn]string
	n int
}

func (w *watchTable) init() {
	for i := range w.m {
		w.m[i] = map[string]map[*conn]string{}
	}
}

// arm adds a watch; false when the agent's watch limit is reached.
func (s *Server) arm(c *conn, kind watchKind, path, clientPath string) bool {
	byConn := s.watches.m[kind][path]
	if _, ok := byConn[c]; ok {
		return true
	}
	if s.watches.n >= s.cfg.MaxWatches {
		s.stats.watchLimit.Add(1)
		s.log.Warn("watch refused: this agent holds the maximum number of watches (zookeeper MaxWatches)",
			"limit", s.cfg.MaxWatches, "path", clientPath, "remote", c.remote)
		return false
	}
	if byConn == nil {
		byConn = map[*conn]string{}
		s.watches.m[kind][path] = byConn
	}
	byConn[c] = clientPath
	c.watches[watchKey{kind, path}] = struct{}{}
	s.watches.n++
	return true
}

func (s *Server) disarm(c *conn, kind watchKind, path string) bool {
	byConn := s.watches.m[kind][path]
	if _, ok := byConn[c]; !ok {
		return false
	}
	delete(byConn, c)
	if len(byConn) == 0 {
		delete(s.watches.m[kind], path)
	}
	delete(c.watches, watchKey{kind, path})
	s.watches.n--
	return true
}

// dropWatches removes every watch of a closing connection.
func (s *Server) dropWatches(c *conn) {
	for k := range c.watches {
		s.disarm(c, k.kind, k.path)
	}
}

// fire notifies the watchers of one event at tree path p (spec §3.2):
// created, deleted and data changes go to p's data watchers (one-shot),
// deletes also to its child watchers, child changes to its child watchers;
// persistent watches on p see all of them, recursive watches on p or an
// ancestor all but child changes. A connection gets one notification per
// event even when several of its watches match. s.mu held.
func (s *Server) fire(ev int32, p string) {
	var sent map[*conn]bool
	notify := func(c *conn, clientPath string) {
		if sent[c] {
			return
		}
		if sent == nil {
			sent = map[*conn]bool{}
		}
		sent[c] = true
		c.notify(ev, clientPath, s.zxid)
	}
	oneShot := func(kind watchKind) {
		for c, cp := range s.watches.m[kind][p] {
			notify(c, cp)
			s.disarm(c, kind, p)
		}
	}
	switch ev {
	case zkwire.EventNodeChildrenChanged:
		oneShot(watchChild)
	case zkwire.EventNodeDeleted:
		oneShot(watchData)
		oneShot(watchChild)
	default:
		oneShot(watchData)
	}
	for c, cp := range s.watches.m[watchPersistent][p] {
		notify(c, cp)
	}
	if ev == zkwire.EventNodeChildrenChanged || len(s.watches.m[watchRecursive]) == 0 {
		return
	}
	for q := p; ; q = parentOf(q) {
		for c := range s.watches.m[watchRecursive][q] {
			notify(c, p)
		}
		if q == "/" {
			return
		}
	}
}
