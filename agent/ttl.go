package agent

import (
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
)

// httpDoor names the leases of registrations made over the HTTP API: one
// per primary record key, with the TTL's deadline.
const httpDoor = "http"

// holdHTTP records the lease of a registration just applied: its primary
// key, the prefixes of what else it covers (a master's queues), and its
// TTL (0: as long as the agent). regMu must be held.
func (a *Agent) holdHTTP(key string, prefixes []string, ttl time.Duration) {
	a.ttl.set(key, ttl)
	l := lease.Lease{Door: httpDoor, ID: key, Keys: []string{key}, Prefixes: prefixes}
	if ttl > 0 {
		l.Deadline = time.Now().Add(ttl)
	}
	a.PutLease(l)
}

// restoreHTTPLeases takes back the HTTP registrations restored at start:
// their records are republished; their TTLs run on from where they were.
func (a *Agent) restoreHTTPLeases() {
	for _, l := range a.RestoredLeases(httpDoor) {
		if !l.Deadline.IsZero() {
			a.ttl.mu.Lock()
			a.ttl.deadlines[l.ID] = l.Deadline
			a.ttl.mu.Unlock()
		}
	}
}

// ttls remembers the deadline of each registration made with a TTL, by its
// primary record key. A registration without TTL has no entry and lives as
// long as the agent.
type ttls struct {
	mu        sync.Mutex
	deadlines map[string]time.Time
}

func newTTLs() *ttls { return &ttls{deadlines: map[string]time.Time{}} }

// set renews (ttl > 0) or clears (ttl == 0) the deadline of key.
func (t *ttls) set(key string, ttl time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ttl <= 0 {
		delete(t.deadlines, key)
		return
	}
	t.deadlines[key] = time.Now().Add(ttl)
}

func (t *ttls) clear(key string) { t.set(key, 0) }

// expired removes and returns the keys whose deadline has passed.
func (t *ttls) expired(now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for k, d := range t.deadlines {
		if !now.Before(d) {
			out = append(out, k)
			delete(t.deadlines, k)
		}
	}
	return out
}

// expireLoop withdraws registrations whose TTL ran out. Checked four times
// a second: TTLs are seconds long, and a scan of one agent's own
// registrations is cheap.
func (a *Agent) expireLoop() {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case now := <-tick.C:
			a.expire(now)
		}
	}
}

// expire withdraws the registrations due at now. Taking the due keys and
// withdrawing them happen under one hold of regMu, which every
// registration takes to apply and set its TTL: otherwise a renewal landing
// between the two would be withdrawn right after it was accepted, its new
// deadline left behind with nothing to expire.
func (a *Agent) expire(now time.Time) {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	for _, key := range a.ttl.expired(now) {
		a.log.Info("registration expired", "key", key)
		a.m().IncrCounter([]string{"registrations", "expired"}, 1)
		a.withdrawLocked(key)
	}
}
