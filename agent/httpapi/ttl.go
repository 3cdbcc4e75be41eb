package httpapi

import (
	"net/http"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// httpDoor names the leases of registrations made over the HTTP API: one
// per primary record key, with the TTL's deadline.
const httpDoor = "http"

// holdHTTP writes the lease of a registration about to be applied (puts
// and deletes), with the records it will then cover, and sets its TTL: an
// error means the data dir could not save it (503) or the agent's record
// budget refused it (507), and the caller applies nothing. Otherwise the caller applies the change, lets go of
// regMu, and waits (settled) before it answers. The lease is the
// registration's primary key, the prefixes of what else it covers (a
// master's queues), and its TTL (0: as long as the agent). regMu must be
// held.
func (s *Server) holdHTTP(key string, prefixes []string, ttl time.Duration, puts []routes.Record, deletes []string) (lease.Saving, error) {
	now := time.Now()
	l := lease.Lease{Door: httpDoor, ID: key, Keys: []string{key}, Prefixes: prefixes, Renewed: now}
	if ttl > 0 {
		l.Deadline = now.Add(ttl)
	}
	// As the table will hold them (a broker keeps its stamp when
	// unchanged), so a renewal that changes nothing writes nothing.
	sv, err := s.host.Hold(l, l.RecordsAfter(s.table, puts, deletes))
	if err != nil {
		return lease.Saving{}, storeError(err)
	}
	s.ttl.set(key, ttl)
	return sv, nil
}

// settled waits, with regMu let go, until the change sv stands for is on
// disk, so that registrations at the same moment share one fsync; an
// error before it (err), or one on the way to the disk (503), means the
// change is not acknowledged.
func (s *Server) settled(sv lease.Saving, err error) error {
	if err != nil {
		return err
	}
	if err := sv.Wait(); err != nil {
		return errorf(http.StatusServiceUnavailable, "%v", err)
	}
	return nil
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
		if _, _, err := s.withdrawLocked(key); err != nil {
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
