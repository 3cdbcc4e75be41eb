package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/namecast/namecast/dubbo"
)

// opTimeout bounds one background write (a retry, a renewal, a replay), so a
// hung agent cannot stall the retry loop for every other URL.
const opTimeout = 10 * time.Second

// registration is what the registry wants the agent to hold for one URL,
// and whether the agent is known to hold it. Writes for one URL go to the
// agent one at a time under op, so a Register and an Unregister of the same
// URL can never reach the agent in the opposite order.
type registration struct {
	url dubbo.URL
	op  sync.Mutex

	// Guarded by Registry.mu.
	want    bool // registered (true) or withdrawn (false)
	pending bool // the agent may not match want: the retry loop will try
	removed bool // dropped from Registry.regs; callers take a fresh entry
}

// Register registers url (Dubbo's register): a provider, a consumer, or a
// persistent rule (dynamic=false), filed under its category parameter
// (providers when absent). Registering the same URL again is harmless; URLs
// that differ in any parameter are separate registrations. See Registry for
// what happens when the agent cannot be reached.
func (r *Registry) Register(ctx context.Context, url string) error {
	u, err := dubbo.Parse(url)
	if err != nil {
		return fmt.Errorf("namecast: register: %w", err)
	}
	e, err := r.lockEntry(u)
	if err != nil {
		return err
	}
	defer e.op.Unlock()
	r.setWant(e, true)
	return r.outcome("register", e, r.sync(ctx, e))
}

// Unregister withdraws url (Dubbo's unregister), matched on the full URL.
// Withdrawing a dynamic URL that is not registered is not an error; a
// persistent rule (dynamic=false) that does not exist is, as in Dubbo.
// Persistent rules belong to the cluster, so any registry may delete one.
func (r *Registry) Unregister(ctx context.Context, url string) error {
	u, err := dubbo.Parse(url)
	if err != nil {
		return fmt.Errorf("namecast: unregister: %w", err)
	}
	e, err := r.lockEntry(u)
	if err != nil {
		return err
	}
	defer e.op.Unlock()
	r.setWant(e, false)
	return r.outcome("unregister", e, r.sync(ctx, e))
}

// lockEntry returns url's entry with its op lock held, creating it if
// needed. An entry dropped while we waited for its lock is stale: the next
// caller must not revive it, or the registry would forget what it did.
func (r *Registry) lockEntry(u dubbo.URL) (*registration, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrRegistryClosed
		}
		e := r.regs[u.String()]
		if e == nil {
			e = &registration{url: u}
			r.regs[u.String()] = e
		}
		r.mu.Unlock()
		e.op.Lock()
		r.mu.Lock()
		removed := e.removed
		r.mu.Unlock()
		if !removed {
			return e, nil
		}
		e.op.Unlock()
	}
}

func (r *Registry) setWant(e *registration, want bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.want, e.pending = want, true
}

// sync makes the agent match e.want and records the outcome: a transient
// failure leaves the entry pending for the retry loop; success or a
// refusal that cannot heal settles it, and a settled withdrawal is
// forgotten. e.op must be held.
func (r *Registry) sync(ctx context.Context, e *registration) error {
	r.mu.Lock()
	want, epoch := e.want, r.epoch
	r.mu.Unlock()
	var err error
	if want {
		var ttl time.Duration
		if e.url.Dynamic() {
			ttl = r.opts.TTL
		}
		_, err = r.c.RegisterURL(ctx, e.url.String(), ttl)
	} else {
		err = r.c.UnregisterURL(ctx, e.url.String())
		if IsNotFound(err) && e.url.Dynamic() {
			err = nil // nothing to withdraw is what we wanted
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e.pending = err != nil && !final(err)
	if r.epoch != epoch && e.want && e.url.Dynamic() {
		e.pending = true // the agent restarted under us: this answer may be the old one's
	}
	if !e.pending && (!e.want || err != nil) {
		e.removed = true
		delete(r.regs, e.url.String())
	}
	return err
}

// final reports whether retrying err cannot help: the agent understood the
// request and refused it (a 4xx, 404 included).
func final(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code >= 400 && se.Code < 500
}

// outcome turns sync's error into what the caller gets, following the check
// parameter (see Registry).
func (r *Registry) outcome(op string, e *registration, err error) error {
	switch {
	case err == nil:
		return nil
	case final(err):
		return fmt.Errorf("namecast: %s %s: %w", op, e.url, err)
	case !checked(e.url):
		r.log.Warn(op+" failed; retrying in the background", "url", e.url.String(), "every", r.opts.RetryPeriod, "err", err)
		return nil
	}
	return fmt.Errorf("namecast: %s %s failed (retrying in the background every %v): %w", op, e.url, r.opts.RetryPeriod, err)
}

// checked is Dubbo's check rule for a registration: with check=false, or
// for a consumer:// URL (which Dubbo never lets fail), failures are only
// logged.
func checked(u dubbo.URL) bool {
	return u.Protocol() != "consumer" && checkParam(u)
}

// checkParam reads the check parameter, true by default; any value but
// "true" is false, as Java's Boolean.parseBoolean has it.
func checkParam(u dubbo.URL) bool {
	v := u.Param("check", "")
	return v == "" || strings.EqualFold(v, "true")
}

// entries snapshots the registrations keep selects.
func (r *Registry) entries(keep func(*registration) bool) []*registration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*registration
	for _, e := range r.regs {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// retryLoop retries pending writes every RetryPeriod (or at once when
// woken after an agent restart) and renews TTL registrations.
func (r *Registry) retryLoop() {
	retry := time.NewTicker(r.opts.RetryPeriod)
	defer retry.Stop()
	var renew <-chan time.Time
	if r.opts.TTL > 0 {
		t := time.NewTicker(r.opts.TTL / 3)
		defer t.Stop()
		renew = t.C
	}
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-retry.C:
			r.retryPending()
		case <-r.wake:
			r.retryPending()
		case <-renew:
			r.renew()
		}
	}
}

func (r *Registry) retryPending() {
	for _, e := range r.entries(func(e *registration) bool { return e.pending }) {
		r.background(e, func(e *registration) bool { return e.pending })
	}
}

// renew re-registers every settled dynamic registration, which pushes its
// TTL deadline back on the agent.
func (r *Registry) renew() {
	live := func(e *registration) bool { return e.want && !e.pending && e.url.Dynamic() }
	for _, e := range r.entries(live) {
		r.background(e, live)
	}
}

// background syncs e from a registry goroutine if it still needs it.
func (r *Registry) background(e *registration, needs func(*registration) bool) {
	e.op.Lock()
	defer e.op.Unlock()
	r.mu.Lock()
	skip := e.removed || !needs(e) || r.ctx.Err() != nil
	want := e.want
	r.mu.Unlock()
	if skip {
		return
	}
	// Not cancelled by Close: a request abandoned by the client may still
	// be applied by the agent, after the withdrawal Close sends next, and
	// leave the URL registered until its TTL. Close waits for this one.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), opTimeout)
	defer cancel()
	op := "register"
	if !want {
		op = "unregister"
	}
	switch err := r.sync(ctx, e); {
	case err == nil:
		r.log.Debug(op+" done", "url", e.url.String())
	case final(err):
		r.log.Error(op+" refused by the agent; giving up", "url", e.url.String(), "err", err)
	default:
		r.log.Debug(op+" failed; will retry", "url", e.url.String(), "err", err)
	}
}

// replay marks every dynamic registration pending and wakes the retry
// loop: the agent restarted, and a restarted agent holds none of them.
// Persistent rules are not replayed: they belong to the cluster and
// outlived the restart, and writing one again could undo a later delete.
func (r *Registry) replay() {
	r.mu.Lock()
	r.epoch++
	n := 0
	for _, e := range r.regs {
		if e.want && e.url.Dynamic() {
			e.pending = true
			n++
		}
	}
	r.mu.Unlock()
	if n > 0 {
		r.log.Debug("replaying registrations", "count", n)
		poke(r.wake)
	}
}

// unregisterAll is Close's withdrawal: every dynamic registration, and
// every withdrawal still pending, within closeTimeout.
func (r *Registry) unregisterAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	due := func(e *registration) bool { return !e.want || e.url.Dynamic() }
	for _, e := range r.entries(due) {
		e.op.Lock()
		r.mu.Lock()
		skip := e.removed
		e.want = false
		r.mu.Unlock()
		if !skip {
			if err := r.sync(ctx, e); err != nil && !IsNotFound(err) {
				errs = append(errs, fmt.Errorf("namecast: unregister %s: %w", e.url, err))
			}
		}
		e.op.Unlock()
	}
	return errors.Join(errs...)
}
