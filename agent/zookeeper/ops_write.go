package zookeeper

import (
	"errors"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

// create answers create, create2 and createContainer (check order of
// ZooKeeper's PrepRequestProcessor: flags, path, ACL, parent, existence,
// ephemeral parent), once what it changed is on disk (answer).
func (s *Server) create(c *conn, h zkwire.RequestHeader, r *zkwire.CreateRequest) int32 {
	code, body, sv := s.createLocked(c, h, r)
	s.pace(c)
	return s.answer(c, h.Xid, code, body, []lease.Saving{sv})
}

// createLocked makes the change of a create and returns its answer, and
// the lease write to wait for before giving it.
func (s *Server) createLocked(c *conn, h zkwire.RequestHeader, r *zkwire.CreateRequest) (int32, zkwire.Record, lease.Saving) {
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
	flags := r.Flags
	if h.Type == zkwire.OpCreateContainer {
		flags = zkwire.FlagContainer
	}
	switch flags {
	case zkwire.FlagPersistent, zkwire.FlagEphemeral, zkwire.FlagContainer:
	case zkwire.FlagPersistentSequential, zkwire.FlagEphemeralSequential:
		s.refuse(c, "sequential create", "without consensus an agent cannot mint cluster-unique ordered names; "+
			"recipes built on them (Curator's locks, LeaderSelector, LeaderLatch, queues; kazoo's Lock, Election, Queue) cannot work through namecast", r.Path)
		return fail(zkwire.ErrUnimplemented)
	case zkwire.FlagPersistentTTL, zkwire.FlagPersistentSeqTTL:
		s.refuse(c, "TTL create", "TTL nodes are not served by namecast", r.Path)
		return fail(zkwire.ErrUnimplemented)
	default:
		return fail(zkwire.ErrBadArguments)
	}
	// ZooKeeper's order (PrepRequestProcessor): a path with no '/' or a
	// NUL, the ACL, the parent as spelled, then the whole path's syntax,
	// so "/a//b" answers NONODE (no parent "/a/") as there.
	if !strings.Contains(r.Path, "/") || strings.IndexByte(r.Path, 0) >= 0 {
		return fail(zkwire.ErrBadArguments)
	}
	if len(r.ACL) == 0 {
		return fail(zkwire.ErrInvalidACL)
	}
	p := canonical(r.Path) // an invalid path is left as it is
	pp := parentOf(p)
	if pp == configPath {
		return fail(zkwire.ErrNoAuth) // read-only, as ZooKeeper's ACL on it
	}
	parent := s.tree.nodes[pp]
	switch {
	case parent == nil:
		return fail(zkwire.ErrNoNode)
	case !validPath(r.Path):
		return fail(zkwire.ErrBadArguments)
	case s.tree.nodes[p] != nil:
		return fail(zkwire.ErrNodeExists)
	case parent.owner != 0:
		return fail(zkwire.ErrNoChildrenForEphemerals)
	}
	ephemeral := flags == zkwire.FlagEphemeral
	ss := c.sess
	if ephemeral && (ss == nil || ss.ended) {
		return fail(zkwire.ErrSessionExpired)
	}
	rec := s.recordFor(p, r.Path, r.Data, 0, 0, ephemeral, ss)
	if rec.Znode != nil {
		rec.Znode.Container = flags == zkwire.FlagContainer
		rec.Znode.Replaces = s.deletedHere(rec.Key())
	}
	key := rec.Key()
	if ephemeral {
		// Its session's lease is saved with it, naming this record alone,
		// then it is applied and the tree refreshed, one step for other
		// writers; the answer waits for the disk with the locks let go.
		// A create that cannot be saved changes nothing.
		w := s.sessionWrite(ss, []routes.Record{rec}, nil)
		var code int32
		var body zkwire.Record
		err := s.reg.Write(func() {
			s.noteWriteLocked(ss, w)
			if h := s.hidden[key]; h != nil {
				// Re-created while its delete was held: the other agents
				// never see the gap (or see one update if the content
				// changed).
				h.timer.Stop()
				delete(s.hidden, key)
			}
			s.owners[key] = ss.id
			code, body = s.createdLocked(c, h, p, r.Path)
			unlock()
		}, w)
		switch {
		case err == nil:
			return code, body, sv
		case errors.Is(err, host.ErrUnsaved):
			s.log.Error("a change could not be saved to the data dir; answered SYSTEMERROR", "remote", c.remote, "err", err)
			return zkwire.ErrSystem, nil, sv
		case errors.Is(err, routes.ErrBudget):
			return fail(zkwire.ErrQuotaExceeded) // the host logs it, once a minute
		}
		s.log.Error("ephemeral create refused: it could not be saved to the data dir", "path", r.Path, "session", hexID(ss.id), "err", err)
		return fail(zkwire.ErrSystem)
	}
	s.mu.Unlock()
	if code := s.applyRules([]routes.Record{rec}, nil); code != zkwire.ErrOK {
		s.mu.Lock()
		return fail(code)
	}
	s.mu.Lock()
	code, body := s.createdLocked(c, h, p, r.Path)
	return code, body, sv
}

// createdLocked is a create's answer once applied: the tree refreshed at
// tree path p, which the client spelled as written. s.mu held.
func (s *Server) createdLocked(c *conn, h zkwire.RequestHeader, p, written string) (int32, zkwire.Record) {
	s.syncDirtyLocked()
	s.refresh(p)
	n := s.tree.nodes[p]
	if n == nil {
		// A concurrent remote delete won; report what a client would see.
		return zkwire.ErrNoNode, nil
	}
	if c.sess != nil && c.sess.lost {
		// Another agent's create of the path, seen meanwhile, won: the
		// session is being expired (conflicts.go).
		return zkwire.ErrSessionExpired, nil
	}
	if h.Type == zkwire.OpCreate {
		return zkwire.ErrOK, &zkwire.PathOnly{Path: written}
	}
	return zkwire.ErrOK, &zkwire.Create2Response{Path: written, Stat: n.stat()}
}

// applyRules writes persistent znodes through the agent, answering what
// a refusal means to a client: QUOTAEXCEEDED past the agent's bound on
// rules (and, for ephemeral znodes, past its record budget), SYSTEMERROR when its data dir could not save the change (then
// nothing changed). s.mu not held.
// deletedHere is the newest stamp of the other agents' records at key
// deleted through this agent and not yet withdrawn by them: a create
// there replaces them (routes.Znode.Replaces), it does not conflict
// with them. s.mu held.
func (s *Server) deletedHere(key string) uint64 {
	var st uint64
	for _, x := range s.suppressed[key] {
		st = max(st, x.stamp)
	}
	return st
}

func (s *Server) applyRules(puts []routes.Record, deletes []string) int32 {
	_, err := s.reg.ApplyRules(puts, deletes)
	switch {
	case err == nil:
		return zkwire.ErrOK
	case errors.Is(err, routes.ErrRulesFull):
		s.log.Warn("persistent write refused", "err", err)
		return zkwire.ErrQuotaExceeded
	}
	s.log.Error("persistent write refused", "err", err)
	return zkwire.ErrSystem
}

// recordFor builds the record of a znode at tree path p, which the client
// spelled as written: the URL record for a Dubbo URL leaf (keeping the
// spelling and data), else a Znode. Both carry a new Lamport stamp, which
// orders them against another agent's record of the same path (pick).
// s.mu held.
func (s *Server) recordFor(p, written string, data []byte, version int32, ctime int64, ephemeral bool, ss *session) routes.Record {
	stamp := s.table.Stamp()
	if u, _, ok := urlOfPath(p); ok {
		if written != p {
			u.Path = written
		}
		u.Data, u.Stamp = string(data), stamp
		if ephemeral && ss != nil {
			u.Owner = ss.id
		}
		return routes.Record{URL: &u}
	}
	now := time.Now().UnixMilli()
	if ctime == 0 {
		ctime = now
	}
	// Copied: data aliases the connection's frame buffer. nil (Java's
	// null) stays apart from empty.
	z := &routes.Znode{Path: p, Data: append(make([]byte, 0, len(data)), data...), Version: version, Ctime: ctime, Mtime: now, Stamp: stamp}
	if data == nil {
		z.Data = nil
	}
	if ephemeral && ss != nil {
		z.Owner = ss.id
	}
	if isSetPath(p) && !ephemeral {
		z.Part = s.local
	}
	return routes.Record{Znode: z}
}
