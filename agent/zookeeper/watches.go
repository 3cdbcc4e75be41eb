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
// path, the connections watching and the paths each asked with (the ones
// its notifications must carry). One entry per (kind, path, connection,
// spelling), as in ZooKeeper: a client watching one path twice gets one
// event. Two spellings of one Dubbo URL leaf are two paths to a client, so
// each gets its own event. s.mu guards it.
type watchTable struct {
	m [numWatchKinds]map[string]map[*conn][]string
	n int
}

func (w *watchTable) init() {
	for i := range w.m {
		w.m[i] = map[string]map[*conn][]string{}
	}
}

// arm adds a watch; false when the agent's watch limit is reached.
func (s *Server) arm(c *conn, kind watchKind, path, clientPath string) bool {
	byConn := s.watches.m[kind][path]
	for _, cp := range byConn[c] {
		if cp == clientPath {
			return true
		}
	}
	if s.watches.n >= s.cfg.MaxWatches {
		s.stats.watchLimit.Add(1)
		s.log.Warn("watch refused: this agent holds the maximum number of watches (zookeeper MaxWatches)",
			"limit", s.cfg.MaxWatches, "path", clientPath, "remote", c.remote)
		return false
	}
	if byConn == nil {
		byConn = map[*conn][]string{}
		s.watches.m[kind][path] = byConn
	}
	byConn[c] = append(byConn[c], clientPath)
	c.watches[watchKey{kind, path}] = struct{}{}
	s.watches.n++
	return true
}

// disarm removes c's watches of kind at path: every spelling, or only
// clientPath's when it is not "". false if there was none.
func (s *Server) disarm(c *conn, kind watchKind, path, clientPath string) bool {
	byConn := s.watches.m[kind][path]
	list, ok := byConn[c]
	if !ok {
		return false
	}
	if clientPath != "" {
		kept := list[:0]
		for _, cp := range list {
			if cp != clientPath {
				kept = append(kept, cp)
			}
		}
		if len(kept) == len(list) {
			return false
		}
		s.watches.n -= len(list) - len(kept)
		if len(kept) > 0 {
			byConn[c] = kept
			return true
		}
	} else {
		s.watches.n -= len(list)
	}
	delete(byConn, c)
	if len(byConn) == 0 {
		delete(s.watches.m[kind], path)
	}
	delete(c.watches, watchKey{kind, path})
	return true
}

// watching reports whether c watches path with kind under clientPath.
func (s *Server) watching(c *conn, kind watchKind, path, clientPath string) bool {
	for _, cp := range s.watches.m[kind][path][c] {
		if cp == clientPath {
			return true
		}
	}
	return false
}

// dropWatches removes every watch of a closing connection.
func (s *Server) dropWatches(c *conn) {
	for k := range c.watches {
		s.disarm(c, k.kind, k.path, "")
	}
}

// fire notifies the watchers of one event at tree path p (spec §3.2):
// created, deleted and data changes go to p's data watchers (one-shot),
// deletes also to its child watchers, child changes to its child watchers;
// persistent watches on p see all of them, recursive watches on p or an
// ancestor all but child changes. A connection gets one notification per
// event and path it asked with, even when several of its watches match.
// s.mu held.
func (s *Server) fire(ev int32, p string) {
	type sentTo struct {
		c    *conn
		path string
	}
	var sent map[sentTo]bool
	notify := func(c *conn, clientPath string) {
		if sent[sentTo{c, clientPath}] {
			return
		}
		if sent == nil {
			sent = map[sentTo]bool{}
		}
		sent[sentTo{c, clientPath}] = true
		c.notify(ev, clientPath, s.zxid)
	}
	oneShot := func(kind watchKind) {
		for c, cps := range s.watches.m[kind][p] {
			for _, cp := range cps {
				notify(c, cp)
			}
			s.disarm(c, kind, p, "")
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
	for c, cps := range s.watches.m[watchPersistent][p] {
		for _, cp := range cps {
			notify(c, cp)
		}
	}
	if ev == zkwire.EventNodeChildrenChanged || len(s.watches.m[watchRecursive]) == 0 {
		return
	}
	shown := s.shownPath(p)
	for q := p; ; q = parentOf(q) {
		for c := range s.watches.m[watchRecursive][q] {
			notify(c, shown)
		}
		if q == "/" {
			return
		}
	}
}
