package zookeeper

import (
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

// door names this package's leases (package lease): one per session that
// owns ephemeral znodes, so that an agent restarted with its data dir
// resumes the session, with its znodes republished, and a client that
// re-attaches with its id and password within its timeout keeps both.
const door = "zookeeper"

// savedSession is a session as its lease keeps it. Its ephemeral
// records are the lease's Keys: the state stays the same size whatever
// the session holds, so a create saves one key, not the session's.
type savedSession struct {
	ID        int64  `json:"id"`
	Passwd    []byte `json:"passwd"`
	TimeoutMs int64  `json:"timeoutMs"`
	// Keys are its ephemeral records in a state saved by an agent that
	// listed them here too; read with the lease's own.
	Keys []string `json:"keys,omitempty"`
}

func sessionLeaseID(id int64) string { return hexID(id) }

// holdLocked refreshes ss's lease while its ephemeral znodes stay as they
// are: its deadline (the time past which this agent would expire it if
// its client never came back), and its saved state once rebuilt (a new
// timeout). s.mu held (the lease table's lock is taken after it, never
// the other way round). A change of its znodes is a sessionWrite
// instead. An error means the data dir could not save it.
func (s *Server) holdLocked(ss *session, deadline time.Time) error {
	if ss.ended || len(ss.keys) == 0 {
		return nil
	}
	w := s.sessionWrite(ss, nil, nil)
	w.Lease.Deadline = deadline
	if err := s.reg.Write(nil, w); err != nil {
		return err
	}
	ss.heldUntil = deadline
	return nil
}

// sessionWrite is the write of ss's lease that puts puts and deletes
// deletes of its ephemeral records, naming only those: its deadline a
// timeout from now, and its state (rebuilt when its timeout changed);
// the lease goes when the session is left with none. Once Write applied
// it, noteWriteLocked records it in ss. s.mu held.
func (s *Server) sessionWrite(ss *session, puts []routes.Record, deletes []string) lease.Write {
	if ss.leaseState == nil {
		ss.leaseState = sessionState(ss)
	}
	w := lease.Write{Lease: lease.Lease{Door: door, ID: sessionLeaseID(ss.id), Deadline: time.Now().Add(ss.timeout),
		State: ss.leaseState}, Puts: puts, Deletes: deletes}
	if len(puts) == 0 && len(deletes) > 0 {
		left := len(ss.keys)
		for _, k := range deletes {
			if _, ok := ss.keys[k]; ok {
				left--
			}
		}
		w.Drop = left == 0
	}
	return w
}

// noteWriteLocked records in ss its write w, applied. s.mu held.
func (s *Server) noteWriteLocked(ss *session, w lease.Write) {
	for _, r := range w.Puts {
		ss.keys[r.Key()] = struct{}{}
	}
	for _, k := range w.Deletes {
		delete(ss.keys, k)
	}
	ss.heldUntil = w.Lease.Deadline
	if w.Drop {
		ss.leaseState = nil
	}
}

func sessionState(ss *session) json.RawMessage {
	st, _ := json.Marshal(savedSession{ID: ss.id, Passwd: ss.passwd, TimeoutMs: ss.timeout.Milliseconds()})
	return st
}

func sortedKeys(m map[string]struct{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// keysChange is ss's whole lease once its ephemeral znodes are keys, for
// a multi that changes several sessions' leases together (doDeletes),
// and what set records of it in ss once saved.
type keysChange struct {
	lease.Change
	set func()
}

// keysChange builds ss's lease change for keys. s.mu held.
func (s *Server) keysChange(ss *session, keys map[string]struct{}) keysChange {
	id := sessionLeaseID(ss.id)
	if len(keys) == 0 {
		return keysChange{Change: lease.Change{Lease: lease.Lease{Door: door, ID: id}, Drop: true},
			set: func() { ss.keys, ss.leaseState = keys, nil }}
	}
	sorted := sortedKeys(keys)
	recs := make([]routes.Record, 0, len(sorted))
	for _, k := range sorted {
		if r, ok := s.table.LocalRecord(k); ok {
			recs = append(recs, r)
		}
	}
	deadline := time.Now().Add(ss.timeout)
	st := sessionState(ss)
	l := lease.Lease{Door: door, ID: id, Keys: sorted, Deadline: deadline, State: st}
	return keysChange{Change: lease.Change{Lease: l, Recs: recs},
		set: func() { ss.keys, ss.leaseState, ss.heldUntil = keys, st, deadline }}
}

// answer queues the reply to a write once what it changed is on disk:
// with the door's locks let go, it waits for saving (the lease writes the
// write made, lease.Saving), so that writers at once share one fsync,
// then answers code and body, or SYSTEMERROR when the change could not
// be saved. The change is made by then, and stays made (lease.Saving
// says why); it is only not acknowledged.
func (s *Server) answer(c *conn, xid, code int32, body zkwire.Record, saving []lease.Saving) int32 {
	for _, sv := range saving {
		if err := sv.Wait(); err != nil && code != zkwire.ErrSystem {
			s.log.Error("a change could not be saved to the data dir; answered SYSTEMERROR", "remote", c.remote, "err", err)
			code, body = zkwire.ErrSystem, nil
		}
	}
	s.mu.Lock()
	c.reply(xid, code, body)
	s.mu.Unlock()
	return code
}

// errEnded refuses a change of a session that has just ended.
var errEnded = errors.New("the session has ended")

// touchSlack is how far a lease's deadline may lag the last request
// before touch moves it: a busy session re-holds it a few times a second,
// not on every request (its deadline is seconds away).
const touchSlack = 100 * time.Millisecond

// touch refreshes the deadline of the lease of c's session: heard from
// now, it would expire a timeout from now. Cheap: the agent saves a mere
// deadline change lazily.
func (s *Server) touch(c *conn) {
	s.mu.Lock()
	if ss := c.sess; ss != nil && len(ss.keys) > 0 {
		if d := time.Now().Add(ss.timeout); d.Sub(ss.heldUntil) >= touchSlack || ss.leaseState == nil {
			s.holdLocked(ss, d)
		}
	}
	s.mu.Unlock()
}

// restoreLeases resumes the sessions that owned ephemeral znodes before
// the agent restarted (their records are already republished). They have
// no connection: a client re-attaching with its id and password keeps
// its session and znodes; otherwise the session expires at its lease's
// deadline and its znodes go. Called by Start before the tree is loaded.
//
// The time left to each session starts running only once the door takes
// handshakes (the agent is ready, or ReadyWait passed): until then a
// returning client's handshake waits (waitReady), and expiring its
// session meanwhile would tell it "expired" for the agent's own delay.
// ZooKeeper does the same on a leader change: sessions get their time
// again once the new leader serves.
func (s *Server) restoreLeases() {
	var orphans []string
	defer func() {
		if len(orphans) > 0 {
			s.reg.Apply(nil, orphans)
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var resumed []*session
	left := map[*session]time.Duration{}
	defer func() {
		if len(resumed) > 0 {
			s.wg.Go(func() { s.armRestored(resumed, left) })
		}
	}()
	for _, l := range s.reg.RestoredLeases(door) {
		var st savedSession
		if err := json.Unmarshal(l.State, &st); err != nil || st.ID == 0 || len(st.Passwd) == 0 || s.sessions[st.ID] != nil {
			s.log.Warn("withdrawing the znodes of an unreadable saved session", "lease", l.ID, "err", err)
			s.reg.DropLease(door, l.ID)
			for _, r := range l.Records(s.table) {
				orphans = append(orphans, r.Key())
			}
			continue
		}
		ss := &session{id: st.ID, passwd: st.Passwd, timeout: time.Duration(st.TimeoutMs) * time.Millisecond,
			keys: map[string]struct{}{}}
		for _, k := range append(l.Keys, st.Keys...) {
			ss.keys[k] = struct{}{}
			s.owners[k] = ss.id
		}
		s.sessions[ss.id] = ss
		resumed = append(resumed, ss)
		left[ss] = max(l.Deadline.Sub(now), 0)
		s.log.Info("session resumed from before the restart; waiting for its client to re-attach",
			"session", hexID(ss.id), "ephemerals", len(ss.keys), "expires_in_once_ready", left[ss].Round(time.Millisecond))
	}
}

// armRestored starts the expiry of restored sessions no client has
// re-attached to, once the door takes handshakes (waitReady's condition).
func (s *Server) armRestored(resumed []*session, left map[*session]time.Duration) {
	if !s.waitReady(nil) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range resumed {
		if ss.conn == nil && !ss.ended && ss.timer == nil && !s.closed {
			ss.timer = time.AfterFunc(left[ss], func() { s.expireDetached(ss) })
		}
	}
}
