package zookeeper

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"sort"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// session is a client session. It lives on this agent only: its ephemeral
// znodes are this agent's records, and another agent answers its id with
// "expired". s.mu guards it.
type session struct {
	id      int64
	passwd  []byte
	timeout time.Duration
	conn    *conn               // nil while detached
	keys    map[string]struct{} // the ephemeral records it owns
	timer   *time.Timer         // expiry while detached
	warned  map[string]bool     // the kinds of refused request logged (refusals.go)
	// nextRefusal is when its next refused request may be answered.
	nextRefusal time.Time
	lost        bool      // lost a conflict with another agent's session: being expired (conflicts.go)
	attached    time.Time // when it last connected or re-attached (RecreateWindow)
	ended       bool

	// Its lease (leases.go): the saved state, rebuilt when its timeout
	// changes; nil when it holds none.
	leaseState json.RawMessage
	heldUntil  time.Time // the deadline last given to the holder
}

func (ss *session) stopTimer() {
	if ss.timer != nil {
		ss.timer.Stop()
		ss.timer = nil
	}
}

// handshake answers a ConnectRequest: a new session, a re-attach of a live
// one (id and password match), or the expired form, after which the
// connection closes.
func (s *Server) handshake(c *conn, req *zkwire.ConnectRequest) (time.Duration, bool) {
	timeout := time.Duration(req.TimeOut) * time.Millisecond
	timeout = min(max(timeout, s.cfg.MinSessionTimeout), s.cfg.MaxSessionTimeout)
	s.mu.Lock()
	defer s.mu.Unlock()
	var ss *session
	if req.SessionID != 0 {
		ss = s.sessions[req.SessionID]
		if ss == nil || ss.ended || ss.lost || !bytes.Equal(ss.passwd, req.Passwd) {
			s.stats.expiredConnects.Add(1)
			c.enqueue(func(e *zkwire.Encoder) {
				(&zkwire.ConnectResponse{Passwd: make([]byte, 16), HasReadOnly: req.HasReadOnly}).Encode(e)
			})
			c.finish()
			return 0, false
		}
		ss.stopTimer()
		if old := ss.conn; old != nil && old != c {
			old.sess = nil
			s.dropWatches(old)
			old.close()
		}
		if ss.timeout != timeout {
			ss.timeout, ss.leaseState = timeout, nil
		}
		s.holdLocked(ss, time.Now().Add(timeout))
		s.log.Debug("session re-attached", "session", hexID(ss.id), "remote", c.remote)
	} else {
		if len(s.sessions) >= s.cfg.MaxSessions {
			s.log.Error("ZooKeeper connection refused: this agent holds the maximum number of sessions (zookeeper MaxSessions)",
				"limit", s.cfg.MaxSessions, "remote", c.remote)
			c.finish()
			return 0, false
		}
		ss = &session{id: s.newSessionID(), passwd: make([]byte, 16), timeout: timeout, keys: map[string]struct{}{}}
		rand.Read(ss.passwd)
		s.sessions[ss.id] = ss
		s.log.Debug("session created", "session", hexID(ss.id), "timeout", timeout, "remote", c.remote)
	}
	ss.conn, c.sess, ss.attached = c, ss, time.Now()
	c.enqueue(func(e *zkwire.Encoder) {
		(&zkwire.ConnectResponse{TimeOut: int32(timeout / time.Millisecond), SessionID: ss.id,
			Passwd: ss.passwd, HasReadOnly: req.HasReadOnly}).Encode(e)
	})
	return timeout, true
}

// newSessionID is a random positive id, unique here, with its top byte
// below 0xff as ZooKeeper keeps it (TTL owners use 0xff).
func (s *Server) newSessionID() int64 {
	for {
		var b [8]byte
		rand.Read(b[:])
		id := int64(binary.BigEndian.Uint64(b[:]) & 0x00ffffffffffffff)
		if id != 0 && s.sessions[id] == nil {
			return id
		}
	}
}

// connClosed detaches a connection from its session. A connection that
// closed without closeSession means, for a client on the same host, that
// the process died: its session expires after min(timeout, grace) unless
// it re-attaches; one silent for its whole timeout expires now.
func (s *Server) connClosed(c *conn, err error) {
	c.logEnd(err)
	s.mu.Lock()
	s.dropWatches(c)
	ss := c.sess
	c.sess = nil
	if ss == nil || ss.conn != c || ss.ended || s.closed {
		s.mu.Unlock()
		return
	}
	ss.conn = nil
	if err == errSilent {
		s.mu.Unlock()
		s.expire(ss, "timed out")
		return
	}
	wait := min(ss.timeout, s.cfg.Grace)
	ss.timer = time.AfterFunc(wait, func() { s.expireDetached(ss) })
	s.holdLocked(ss, time.Now().Add(wait))
	s.mu.Unlock()
}

func (s *Server) expireDetached(ss *session) {
	s.mu.Lock()
	live := ss.conn == nil && !ss.ended && !s.closed
	s.mu.Unlock()
	if live {
		s.expire(ss, "expired")
	}
}

// expire ends a session nobody is told of (its client is gone): its
// znodes go at once, and a removal of its lease the disk refuses is
// saved once it takes writes (lease.Store.Forget). Until then a restart
// restores the session until its lease's deadline, as for a crash.
func (s *Server) expire(ss *session, why string) {
	s.endSession(ss, why, true)
}

// endSession ends a session at once: closeSession, expiry. Its lease's
// removal is written first, under s.mu so that no refresh of its
// deadline puts the lease back meanwhile, so a restart never brings its
// ephemeral znodes back; they are then withdrawn everywhere without a
// DeleteHold (nobody will re-create them under this session). For
// closeSession the caller waits for the returned Saving before it
// answers; when the removal cannot be written, nothing changes and the
// error is returned: the session lives on. forget (an expiry) withdraws
// whatever the disk does (expire).
func (s *Server) endSession(ss *session, why string, forget bool) (lease.Saving, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if ss.ended {
		s.mu.Unlock()
		return lease.Saving{}, nil
	}
	var sv lease.Saving
	if forget {
		sv = s.reg.Forget(door, sessionLeaseID(ss.id))
	} else {
		var err error
		if sv, err = s.reg.Drop(door, sessionLeaseID(ss.id)); err != nil {
			s.mu.Unlock()
			return lease.Saving{}, err
		}
	}
	ss.leaseState = nil
	ss.ended = true
	ss.stopTimer()
	delete(s.sessions, ss.id)
	keys := make([]string, 0, len(ss.keys))
	for k := range ss.keys {
		if s.owners[k] == ss.id {
			delete(s.owners, k)
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	s.mu.Unlock()
	s.log.Debug("session ended", "session", hexID(ss.id), "why", why, "ephemerals", len(keys))
	if len(keys) > 0 {
		s.reg.Apply(nil, keys)
	}
	s.syncDirty()
	return sv, nil
}

func hexID(id int64) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 18)
	b = append(b, '0', 'x')
	for i := 60; i >= 0; i -= 4 {
		b = append(b, digits[(id>>uint(i))&15])
	}
	return string(b)
}
