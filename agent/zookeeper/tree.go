package zookeeper

import (
	"bytes"
	"hash/fnv"
	"sort"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// content is what the table says of one path: whether some record holds it
// and what the record carries. The tree adds what only this agent knows:
// zxids, children, and implicit parents.
type content struct {
	explicit  bool
	builtin   bool
	url       bool // a Dubbo URL record: its data is not kept
	data      []byte
	version   int32
	ctime     int64
	mtime     int64
	owner     int64 // ephemeral owner; 0 for persistent
	persisted bool  // held by a rule (persistent) rather than only by agents
	container bool  // a container node (containers.go)
	aversion  int32 // the ACL version: -1 for /zookeeper/config, as ZooKeeper sets its ACL with version -1 at startup
	// shown is the path as its writer spelled it, when that differs from
	// the tree path (a Dubbo URL leaf whose parameters were not in
	// canonical order): listings and recursive events carry it.
	shown string
}

// znode is one node of this agent's view. A node is in the tree while it
// has content or children; a node with children and no content is an
// implicit parent (empty data, version 0).
type znode struct {
	content
	children            map[string]string // tree name -> name listed (shown)
	czxid, mzxid, pzxid int64
	seen                int64 // ms when it appeared here, for records without times
	cversion            int32
	cvalid              bool // cversion, sorted and encoded reflect children
	sorted              []string
	encoded             []byte // sorted as a jute vector, built on first use
	// A container's reaping state (containers.go).
	hadChild, emptySeen bool
}

type tree struct {
	nodes map[string]*znode
	// alias maps a shown path to its tree path, for nodes listed under a
	// name other than their tree name: a client reads what it listed.
	alias map[string]string
}

// builtinContent is a built-in node's: an empty buffer, not a null one,
// as ZooKeeper 3.8 serves (Curator's EnsembleTracker throws on a null
// /zookeeper/config).
var builtinContent = content{explicit: true, builtin: true, persisted: true, data: []byte{}}

// init adds the nodes every ZooKeeper server has: /, /zookeeper,
// /zookeeper/quota and an empty /zookeeper/config (non-empty data there
// would make Curator's EnsembleTracker rewrite its connect string).
func (t *tree) init(z int64) {
	t.nodes, t.alias = map[string]*znode{}, map[string]string{}
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", configPath} {
		n := &znode{content: builtinContent, children: map[string]string{},
			czxid: z, mzxid: z, pzxid: z}
		if p == configPath {
			n.aversion = -1
		}
		t.nodes[p] = n
		if p != "/" {
			t.nodes[parentOf(p)].children[baseOf(p)] = baseOf(p)
		}
	}
}

// refresh makes the tree agree with the table at path p, firing the watch
// events of whatever changed. s.mu held.
func (s *Server) refresh(p string) {
	if p == "" || p == configPath {
		return
	}
	c := s.resolve(p)
	defer s.checkConflicts(p)
	n := s.tree.nodes[p]
	if n != nil && n.builtin {
		// A built-in node with data set (setData /): the rule's content,
		// else the built-in empty one.
		if c.explicit {
			c.builtin, c.persisted, c.owner = true, true, 0
		} else {
			c = builtinContent
		}
	}
	switch {
	case c.explicit && n == nil:
		s.addNode(p, c)
	case c.explicit && n.explicit && (n.owner != c.owner || n.shown != c.shown):
		s.replaceNode(p, n, c)
	case c.explicit:
		changed := !bytes.Equal(n.data, c.data) || n.version != c.version
		n.content = c
		s.noteContainer(p, n)
		if changed {
			n.mzxid = s.nextZxid()
			s.fire(zkwire.EventNodeDataChanged, p)
		}
	case n != nil && n.explicit:
		changed := len(n.data) > 0 || n.version != 0
		s.setAlias(p, n.shown, "")
		n.content = content{}
		if len(n.children) == 0 {
			s.removeNode(p)
		} else if changed {
			n.mzxid = s.nextZxid()
			s.fire(zkwire.EventNodeDataChanged, p)
		}
	}
}

// addNode adds p, and its missing ancestors as implicit parents, firing
// NodeCreated for each, then NodeChildrenChanged for its parent.
func (s *Server) addNode(p string, c content) *znode {
	if p != "/" && s.tree.nodes[parentOf(p)] == nil {
		s.addNode(parentOf(p), content{})
	}
	z := s.nextZxid()
	n := &znode{content: c, children: map[string]string{}, czxid: z, mzxid: z, pzxid: z, seen: time.Now().UnixMilli()}
	s.tree.nodes[p] = n
	s.setAlias(p, "", c.shown)
	s.noteContainer(p, n)
	s.fire(zkwire.EventNodeCreated, p)
	if p != "/" {
		parent := s.tree.nodes[parentOf(p)]
		parent.children[baseOf(p)] = n.name(p)
		parent.hadChild = true
		parent.pzxid, parent.cvalid = z, false
		s.fire(zkwire.EventNodeChildrenChanged, parentOf(p))
	}
	return n
}

// replaceNode swaps n's content for c, another writer's node at the same
// path: a create through another agent that won (the later by the
// table's stamps, routes.Znode.Stamp), or the node shown again after the
// winner's went. Watchers see what a ZooKeeper client sees when a node is
// deleted and another session creates it again: NodeDeleted, NodeCreated,
// and the parent's NodeChildrenChanged. s.mu held.
func (s *Server) replaceNode(p string, n *znode, c content) {
	s.fire(zkwire.EventNodeDeleted, p)
	s.setAlias(p, n.shown, c.shown)
	n.content = c
	z := s.nextZxid()
	n.czxid, n.mzxid, n.pzxid, n.seen = z, z, z, time.Now().UnixMilli()
	s.fire(zkwire.EventNodeCreated, p)
	if p == "/" {
		return
	}
	parent := s.tree.nodes[parentOf(p)]
	parent.children[baseOf(p)] = n.name(p)
	parent.pzxid, parent.cvalid = z, false
	s.fire(zkwire.EventNodeChildrenChanged, parentOf(p))
}

// setAlias moves p's alias from the shown path old to new ("" for none).
// s.mu held.
func (s *Server) setAlias(p, old, new string) {
	if old != "" && s.tree.alias[old] == p {
		delete(s.tree.alias, old)
	}
	if new != "" {
		s.tree.alias[new] = p
	}
}

// name is the name n is listed under in its parent at tree path p.
func (n *znode) name(p string) string {
	if n.shown != "" {
		return baseOf(n.shown)
	}
	return baseOf(p)
}

// shownPath is the path events about tree path p carry to watchers that
// did not name it themselves (recursive watches).
func (s *Server) shownPath(p string) string {
	if n := s.tree.nodes[p]; n != nil && n.shown != "" {
		return n.shown
	}
	return p
}

// removeNode removes p, firing NodeDeleted, then NodeChildrenChanged for
// its parent; an implicit parent left without children goes too.
func (s *Server) removeNode(p string) {
	s.fire(zkwire.EventNodeDeleted, p) // while p is in the tree: recursive watches read its shown path
	if n := s.tree.nodes[p]; n != nil {
		s.setAlias(p, n.shown, "")
	}
	delete(s.tree.nodes, p)
	if p == "/" {
		return
	}
	pp := parentOf(p)
	parent := s.tree.nodes[pp]
	if parent == nil {
		return
	}
	delete(parent.children, baseOf(p))
	parent.pzxid, parent.cvalid = s.nextZxid(), false
	s.fire(zkwire.EventNodeChildrenChanged, pp)
	if !parent.explicit && len(parent.children) == 0 {
		s.removeNode(pp)
	}
}

// stat is n's Stat. cversion is derived from the child names (spec §7.2):
// equal on every agent for equal children, different after any change.
func (n *znode) stat() zkwire.Stat {
	n.refreshChildren()
	ctime, mtime := n.ctime, n.mtime
	if ctime == 0 {
		ctime = n.seen
	}
	if mtime == 0 {
		mtime = ctime
	}
	return zkwire.Stat{
		Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid, Ctime: ctime, Mtime: mtime,
		Version: n.version, Cversion: n.cversion, Aversion: n.aversion, EphemeralOwner: n.owner,
		DataLength: int32(len(n.data)), NumChildren: int32(len(n.children)),
	}
}

// childVersion hashes the sorted child names (0 for none).
func childVersion(names []string) int32 {
	if len(names) == 0 {
		return 0
	}
	h := fnv.New32a()
	for i, c := range names {
		if i > 0 {
			h.Write([]byte{'/'})
		}
		h.Write([]byte(c))
	}
	return int32(h.Sum32()&0x7fffffff) | 1
}

// refreshChildren sorts n's children into n.sorted, cached until the
// children change (a category of 1,000 providers is listed far more often
// than it changes).
func (n *znode) refreshChildren() {
	if n.cvalid {
		return
	}
	n.sorted = make([]string, 0, len(n.children))
	for _, c := range n.children {
		n.sorted = append(n.sorted, c)
	}
	sort.Strings(n.sorted)
	n.cversion, n.cvalid = childVersion(n.sorted), true
	n.encoded = nil
}

// childrenEncoded is n's sorted children as a jute vector<ustring>, encoded once per
// change of the children and shared by every reply until the next: queued
// replies hold it, so it is replaced, never modified.
func (n *znode) childrenEncoded() []byte {
	n.refreshChildren()
	if n.encoded == nil {
		var e zkwire.Encoder
		e.Strings(n.sorted)
		n.encoded = e.B
	}
	return n.encoded
}
