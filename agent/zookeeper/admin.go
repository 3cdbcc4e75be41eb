package zookeeper

// Operations on live sessions, for operators and tests (Curator's LOST
// and SUSPENDED paths are driven by these in the interop tests).

// SessionIDs lists this agent's live sessions.
func (s *Server) SessionIDs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, 0, len(s.sessions))
	for id := range s.sessions {
		out = append(out, id)
	}
	return out
}

// ExpireSession ends a session as its expiry would: its ephemeral znodes
// are withdrawn everywhere and its connection, if any, is closed, so the
// client learns of the expiry when it reconnects. false if unknown.
func (s *Server) ExpireSession(id int64) bool {
	s.mu.Lock()
	ss := s.sessions[id]
	var c *conn
	if ss != nil {
		c = ss.conn
	}
	s.mu.Unlock()
	if ss == nil {
		return false
	}
	s.expire(ss, "expired by request")
	if c != nil {
		c.close()
	}
	return true
}

// DropConnections closes every client connection without ending its
// session, as a network blip would: clients reconnect and re-attach within
// the grace.
func (s *Server) DropConnections() int {
	conns := s.conns.All()
	for _, c := range conns {
		c.close()
	}
	return len(conns)
}
