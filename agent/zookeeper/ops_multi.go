package zookeeper

import (
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// multi answers a multi of deletes and checks, what zkCli's deleteall
// (ZKUtil.deleteRecursive) and Curator's transactions of deletes send.
// Every operation is checked in order against this agent's view, each
// seeing the deletes before it, in one critical section with the writes;
// if one fails none is applied and the results are ZooKeeper's: 0 for the
// operations before, the failing code, RUNTIMEINCONSISTENCY after. The
// same holds when what it changes cannot be saved to the data dir: the
// deletes are saved together before any is applied (doDeletes), and the
// first operation whose part could not be saved answers the error. As for
// single writes, the checks are this agent's view, not a global order.
// A multi holding any other operation (create, setData) answers
// UNIMPLEMENTED: applying it atomically needs the global order the
// cluster does not have.
func (s *Server) multi(c *conn, xid int32, r *zkwire.MultiRequest) int32 {
	code, resp, saving := s.multiLocked(c, r)
	s.pace(c)
	return s.answer(c, xid, code, resp, saving)
}

// multiLocked applies a multi and returns its answer, and the lease
// writes to wait for before giving it (a failure there answers
// SYSTEMERROR for the whole multi: it was made, but is not acknowledged).
func (s *Server) multiLocked(c *conn, r *zkwire.MultiRequest) (int32, zkwire.Record, []lease.Saving) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writeLost(c) {
		return zkwire.ErrSessionExpired, nil, nil
	}
	if r.Unsupported != 0 {
		s.refuse(c, "multi with create or setData", "applying one atomically needs the global order the cluster does not have; a multi of deletes and checks works", "")
		return zkwire.ErrUnimplemented, nil, nil
	}
	resp := &zkwire.MultiResponse{Types: make([]int32, len(r.Ops)), Errs: make([]int32, len(r.Ops))}
	gone := map[string]bool{}
	paths := make([]string, len(r.Ops))
	failed := false
	for i, op := range r.Ops {
		resp.Types[i] = op.Type
		if failed {
			resp.Errs[i] = zkwire.ErrRuntimeInconsistency
			continue
		}
		var code int32
		if op.Type == zkwire.OpCheck {
			p := s.canon(op.Path)
			switch n := s.tree.nodes[p]; {
			case n == nil || gone[p]:
				code = zkwire.ErrNoNode
			case op.Version != -1 && op.Version != n.version:
				code = zkwire.ErrBadVersion
			}
		} else {
			paths[i], code = s.checkDelete(c, op.Path, op.Version, gone)
			gone[paths[i]] = true
		}
		resp.Errs[i], failed = code, code != zkwire.ErrOK
	}
	if failed {
		return zkwire.ErrOK, resp, nil
	}
	var dels []deletion
	var at []int // dels[j] is operation at[j]
	for i, op := range r.Ops {
		if op.Type == zkwire.OpDelete {
			dels, at = append(dels, s.planDelete(paths[i])), append(at, i)
		}
	}
	code, j, saving := s.doDeletes(dels, s.recreateLikely(c))
	if code != zkwire.ErrOK {
		// A part could not be saved: nothing was applied, and the
		// results say so as ZooKeeper's for a failed multi.
		resp.Errs[at[j]] = code
		for i := at[j] + 1; i < len(r.Ops); i++ {
			resp.Errs[i] = zkwire.ErrRuntimeInconsistency
		}
	}
	return zkwire.ErrOK, resp, saving
}
