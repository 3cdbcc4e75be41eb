package httpapi

import (
	"errors"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// httpDoor names the leases of registrations made over the HTTP API: one
// per primary record key, with the TTL's deadline.
const httpDoor = "http"

// writeHTTP makes a registration's change (puts, its primary record at
// key among them, and deletes) in one host.Write: its lease saved with
// it, the change applied, its TTL set and then (when not nil) run, both
// before regMu is let go, then the change on disk, writers at once
// sharing one fsync. The lease is the registration's primary key, the
// prefixes of what else it covers (a master's queues), and its TTL (0: as
// long as the agent). An error is the answer: 507 past the agent's record
// budget, 503 when the data dir could not save it (nothing changed) or
// the change is not on disk. regMu must be held; writeHTTP lets go of it.
func (s *Server) writeHTTP(key string, prefixes []string, ttl time.Duration, puts []routes.Record, deletes []string, then func()) error {
	_, err := s.writeHTTPApplied(key, prefixes, ttl, puts, deletes, then)
	return err
}

// writeHTTPApplied is writeHTTP, and whether the change was made (an
// error then says it is not on disk).
func (s *Server) writeHTTPApplied(key string, prefixes []string, ttl time.Duration, puts []routes.Record, deletes []string, then func()) (bool, error) {
	now := time.Now()
	l := lease.Lease{Door: httpDoor, ID: key, Prefixes: prefixes, Renewed: now}
	if ttl > 0 {
		l.Deadline = now.Add(ttl)
	}
	err := s.host.Write(func() {
		s.ttl.set(key, ttl)
		if then != nil {
			then()
		}
		s.regMu.Unlock()
	}, lease.Write{Lease: l, Puts: puts, Deletes: deletes})
	applied := err == nil || errors.Is(err, host.ErrUnsaved)
	if !applied {
		s.regMu.Unlock() // refused: nothing changed
	}
	return applied, storeError(err)
}

// restoreLeases takes back the HTTP registrations restored at start:
// their records are republished; their TTLs run on from where they were.
func (s *Server) restoreLeases() {
	for _, l := range s.host.RestoredLeases(httpDoor) {
		if !l.Deadline.IsZero() {
			s.ttl.setDeadline(l.ID, l.Deadline)
		}
	}
}

// ttls remembers the deadline of each registration made with a TTL, by its
// primary record key. A registration without TTL has no entry and lives as
// long as the agent.
//
// The expire loop sleeps until the earliest deadline, not on a tick: most
// agents (a client's sidecar) hold no TTL at all, and a timer firing four
// times a second was a sixth of an idle agent's wake-ups. It looks at most
// every expireGap, so renewals racing their deadlines cost no more scans
// than the old tick, and a registration is withdrawn at most expireGap late.
type ttls struct {
	mu        sync.Mutex
	deadlines map[string]time.Time
	last      time.Time     // when the loop last looked
	at        time.Time     // when it looks next; zero: not until kicked
	kick      chan struct{} // the loop must sleep until the new at
}

const expireGap = 250 * time.Millisecond

func newTTLs() *ttls { return &ttls{deadlines: map[string]time.Time{}, kick: make(chan struct{}, 1)} }

// set renews (ttl > 0) or clears (ttl == 0) the deadline of key.
func (t *ttls) set(key string, ttl time.Duration) {
	if ttl <= 0 {
		t.mu.Lock()
		delete(t.deadlines, key)
		t.mu.Unlock()
		return
	}
	t.setDeadline(key, time.Now().Add(ttl))
}

func (t *ttls) setDeadline(key string, d time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deadlines[key] = d
	if t.at.IsZero() || d.Before(t.at) {
		t.at = later(d, t.last.Add(expireGap))
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
}

func (t *ttls) clear(key string) { t.set(key, 0) }

// expired removes and returns the keys whose deadline has passed, and
// sets when the loop looks next.
func (t *ttls) expired(now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	var next time.Time
	for k, d := range t.deadlines {
		if !now.Before(d) {
			out = append(out, k)
			delete(t.deadlines, k)
		} else if next.IsZero() || d.Before(next) {
			next = d
		}
	}
	t.last, t.at = now, time.Time{}
	if !next.IsZero() {
		t.at = later(next, now.Add(expireGap))
	}
	return out
}

// nextLook is when the loop looks next; zero: not until kicked.
func (t *ttls) nextLook() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at
}

func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// expireLoop withdraws registrations whose TTL ran out, waking only when
// one may have (see ttls).
func (s *Server) expireLoop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	arm := func() {
		if at := s.ttl.nextLook(); at.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(time.Until(at))
		}
	}
	arm() // deadlines restored before the loop started
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.ttl.kick:
			arm()
		case now := <-timer.C:
			s.expire(now)
			arm()
		}
	}
}

// expire withdraws the registrations due at now. Taking the due keys and
// withdrawing them happen under one hold of regMu, which every
// registration takes to apply and set its TTL: otherwise a renewal landing
// between the two would be withdrawn right after it was accepted, its new
// deadline left behind with nothing to expire.
//
// Nobody waits for an expiry's answer, so its removal is not waited for:
// a crash before it reaches the disk restores the lease, but a restart
// does not restore a lease past its deadline.
func (s *Server) expire(now time.Time) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	for _, key := range s.ttl.expired(now) {
		s.log.Info("registration expired", "key", key)
		s.m().IncrCounter([]string{"registrations", "expired"}, 1)
		if _, err := s.withdrawLocked(key); err != nil {
			// Kept, and tried again shortly: an expiry that cannot be
			// saved must not come back at the next start.
			s.log.Error("withdrawing an expired registration failed; trying again", "key", key, "err", err)
			s.ttl.setDeadline(key, now.Add(time.Second))
		}
	}
}

// PendingTTLs is the number of registrations with a TTL deadline pending
// (tests outside the package check that it stays bounded).
func (s *Server) PendingTTLs() int {
	s.ttl.mu.Lock()
	defer s.ttl.mu.Unlock()
	return len(s.ttl.deadlines)
}
