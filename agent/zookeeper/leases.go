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

// savedSession is a session as its lease keeps it.
type savedSession struct {
	ID        int64    `json:"id"`
	Passwd    []byte   `json:"passwd"`
	TimeoutMs int64    `json:"timeoutMs"`
	Keys      []string `json:"keys"` // its ephemeral records
}

func sessionLeaseID(id int64) string { return hexID(id) }

// holdLocked refreshes ss's lease while its ephemeral znodes stay as they
// are: its deadline (the time past which this agent would expire it if
// its client never came back), and its saved state once rebuilt (a new
// timeout). s.mu held (the lease table's lock is taken after it, never
// the other way round). A change of its znodes goes through saveKeysLocked
// instead. An error means the data dir could not save it.
func (s *Server) holdLocked(ss *session, deadline time.Time) error {
	if ss.ended || len(ss.keys) == 0 {
		return nil
	}
	if ss.leaseState == nil {
		keys := sortedKeys(ss.keys)
		ss.leaseState, ss.leaseKeys = sessionState(ss, keys), keys
	}
	ss.heldUntil = deadline
	return s.reg.PutLease(lease.Lease{Door: door, ID: sessionLeaseID(ss.id), Keys: ss.leaseKeys,
		Deadline: deadline, State: ss.leaseState})
}

func sessionState(ss *session, keys []string) json.RawMessage {
	st, _ := json.Marshal(savedSession{ID: ss.id, Passwd: ss.passwd, TimeoutMs: ss.timeout.Milliseconds(), Keys: keys})
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

// saveKeysLocked writes ss's lease as it will be once its ephemeral
// znodes are keys, before the door applies that change: the records of
// keys as the table holds them, put (when not nil) standing for the
// record about to be written; once it owns none, the lease's removal. On
// success ss.keys is keys, and the door applies the change, lets go of
// its locks and waits for the returned Saving before it answers (answer:
// concurrent writers share one fsync, lease.Saving). On an error nothing
// changed, here or in the data dir, and the door applies nothing and
// answers SYSTEMERROR. s.mu held.
func (s *Server) saveKeysLocked(ss *session, keys map[string]struct{}, put *routes.Record) (lease.Saving, error) {
	if ss.ended {
		return lease.Saving{}, errEnded
	}
	ch := s.keysChange(ss, keys, put)
	sv, err := s.reg.HoldAll([]lease.Change{ch.Change})
	if err != nil {
		return lease.Saving{}, err
	}
	ch.set()
	return sv, nil
}

// keysChange is ss's lease change once its ephemeral znodes are keys
// (saveKeysLocked), and what set records of it in ss once saved.
type keysChange struct {
	lease.Change
	set func()
}

// keysChange builds ss's lease change for keys. s.mu held.
func (s *Server) keysChange(ss *session, keys map[string]struct{}, put *routes.Record) keysChange {
	id := sessionLeaseID(ss.id)
	if len(keys) == 0 {
		return keysChange{Change: lease.Change{Lease: lease.Lease{Door: door, ID: id}, Drop: true},
			set: func() { ss.keys, ss.leaseState, ss.leaseKeys = keys, nil, nil }}
	}
	sorted := sortedKeys(keys)
	recs := make([]routes.Record, 0, len(sorted))
	for _, k := range sorted {
		if put != nil && put.Key() == k {
			recs = append(recs, *put)
		} else if r, ok := s.table.LocalRecord(k); ok {
			recs = append(recs, r)
		}
	}
	deadline := time.Now().Add(ss.timeout)
	st := sessionState(ss, sorted)
	l := lease.Lease{Door: door, ID: id, Keys: sorted, Deadline: deadline, State: st}
	return keysChange{Change: lease.Change{Lease: l, Recs: recs},
		set: func() { ss.keys, ss.leaseState, ss.leaseKeys, ss.heldUntil = keys, st, sorted, deadline }}
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
			keys: map[string]struct{}{}, leaseState: l.State, leaseKeys: st.Keys}
		for _, k := range st.Keys {
			ss.keys[k] = struct{}{}
			s.owners[k] = ss.id
		}
		s.sessions[ss.id] = ss
		resumed = append(resumed, ss)
		left[ss] = max(l.Deadline.Sub(now), 0)
		s.log.Info("session resumed from before the restart; waiting for its client to re-attach",
			"session", hexID(ss.id), "ephemerals", len(st.Keys), "expires_in_once_ready", left[ss].Round(time.Millisecond))
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
