package zookeeper

import "time"

// Requests the door cannot serve (sequential and TTL creates, a multi
// holding a create or setData, unknown opcodes and the other operations
// of doc.go's list) answer UNIMPLEMENTED. A recipe built on them often
// retries at once (Curator's LeaderSelector with autoRequeue made tens of
// thousands of refused creates a second), so a refusal is paced: the
// first of a session is answered at once, each later one no sooner than
// RefusalPace after the one before, which keeps a spinning recipe at one
// request a second and its connection otherwise answered (a client
// counts any reply as life). The first refusal of each kind in a session
// is logged at WARN with what was refused and why; every one is counted
// (zookeeper.refused{what}).

// refuse notes a refused request of c's session: it logs the first of
// its kind, counts it, and sets how long c waits before answering it
// (pace). s.mu held.
func (s *Server) refuse(c *conn, what, why, path string) {
	s.stats.countRefused(what)
	ss := c.sess
	if ss == nil {
		return
	}
	if !ss.warned[what] {
		if ss.warned == nil {
			ss.warned = map[string]bool{}
		}
		ss.warned[what] = true // once per session and kind: a retrying client must not flood the log
		s.log.Warn(what+" refused (UNIMPLEMENTED): "+why, "path", path, "session", hexID(ss.id), "remote", c.remote)
	}
	now := time.Now()
	if ss.nextRefusal.After(now) {
		c.paceFor = ss.nextRefusal.Sub(now)
		ss.nextRefusal = ss.nextRefusal.Add(s.cfg.RefusalPace)
	} else {
		ss.nextRefusal = now.Add(s.cfg.RefusalPace)
	}
}

// pace waits out the time refuse set for c's refused request, before
// its answer is queued; Close ends the wait. c's goroutine, no locks.
func (s *Server) pace(c *conn) {
	s.mu.Lock()
	d := c.paceFor
	c.paceFor = 0
	s.mu.Unlock()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}
