package checks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/consul/catalog"
)

// Consul's bounds and defaults (agent/checks, agent/structs).
const (
	// MinInterval is the shortest interval a TCP or HTTP check runs at.
	MinInterval = time.Second
	// DefaultTimeout bounds a TCP or HTTP probe whose Timeout is 0.
	DefaultTimeout = 10 * time.Second
	// MinDeregisterAfter is the shortest DeregisterCriticalServiceAfter.
	MinDeregisterAfter = time.Minute
	// MaxOutput is the most output a check keeps (check_output_max_size).
	MaxOutput = 4096
)

// State is a check's status and its output.
type State struct {
	Status string
	Output string
}

// Config is what a Runner is built from.
type Config struct {
	// Report is told each change of a check's status (see the package
	// comment); nil: nobody is told.
	Report func(checkID string, s State)
	// Deregister is told of a service whose check stayed critical past
	// its DeregisterCriticalServiceAfter; nil: nobody is told.
	Deregister func(serviceID string)
	// DialContext opens TCP checks' connections and HTTP checks'; nil: a
	// net.Dialer's (tests hand in in-memory ones).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	Logger      *slog.Logger
	Metrics     *metrics.Metrics
}

// Runner runs one agent's checks.
type Runner struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context // done at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // guards what follows
	checks  map[string]*check
	closed  bool
	pending []event // reports and deregistrations not yet delivered, in order
	wake    chan struct{}
}

var _ catalog.Runner = (*Runner)(nil)

// check is one running check, under Runner.mu.
type check struct {
	def           catalog.CheckDef
	state         State
	criticalSince time.Time // zero when not critical
	ttl, reap     *time.Timer
	stop          context.CancelFunc // the probe goroutine's
}

// event is one report or deregistration to deliver.
type event struct {
	checkID   string
	state     State
	serviceID string // a deregistration when set
}

// New makes a Runner and starts its delivery goroutine.
func New(cfg Config) *Runner {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.DialContext == nil {
		cfg.DialContext = (&net.Dialer{}).DialContext
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{cfg: cfg, log: log, ctx: ctx, cancel: cancel, checks: map[string]*check{}, wake: make(chan struct{}, 1)}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.deliver()
	}()
	return r
}

// ErrClosed is returned once Close has begun.
var ErrClosed = errors.New("checks: the runner is closed")

// Set starts running def, replacing the check of def.ID if there is one.
// Its status is def.Status (critical when empty) until its first probe
// or UpdateTTL; the door puts that in the record, so it is not reported.
func (r *Runner) Set(def catalog.CheckDef) error {
	if def.ID == "" {
		return errors.New("check has no ID")
	}
	status := def.Status
	if status == "" {
		status = catalog.Critical
	}
	if !valid(status) {
		return fmt.Errorf("check %q: status %q is not passing, warning or critical", def.ID, status)
	}
	switch def.Type() {
	case "http", "tcp":
		def.Interval = max(def.Interval, MinInterval)
		if def.Timeout <= 0 {
			def.Timeout = DefaultTimeout
		}
	}
	if def.DeregisterCriticalServiceAfter > 0 {
		def.DeregisterCriticalServiceAfter = max(def.DeregisterCriticalServiceAfter, MinDeregisterAfter)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if old := r.checks[def.ID]; old != nil {
		old.halt()
	}
	c := &check{def: def, state: State{Status: status}}
	r.checks[def.ID] = c
	if status == catalog.Critical {
		r.becameCritical(c)
	}
	switch def.Type() {
	case "ttl":
		c.ttl = time.AfterFunc(def.TTL, func() { r.expire(c) })
	case "http", "tcp":
		ctx, stop := context.WithCancel(r.ctx)
		c.stop = stop
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.probeLoop(ctx, c)
		}()
	}
	return nil
}

// Remove stops the check id; a check not known is nothing.
func (r *Runner) Remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.checks[id]; c != nil {
		c.halt()
		delete(r.checks, id)
	}
}

// UpdateTTL sets a TTL check's status and output and restarts its TTL.
// The errors are Consul's words.
func (r *Runner) UpdateTTL(id, status, output string) error {
	if !valid(status) {
		return fmt.Errorf("Unknown check status: %q", status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.checks[id]
	if c == nil {
		return fmt.Errorf("Unknown check ID %q. Ensure that the check ID is passed, not the check name.", id)
	}
	if c.def.Type() != "ttl" {
		return fmt.Errorf("CheckID %q does not have associated TTL", id)
	}
	c.ttl.Reset(c.def.TTL)
	r.setLocked(c, status, output)
	return nil
}

// State is the check's status and latest output.
func (r *Runner) State(id string) (State, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.checks[id]; c != nil {
		return c.state, true
	}
	return State{}, false
}

// Close stops every check and waits for the runner's goroutines; safe to
// call more than once.
func (r *Runner) Close() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		for _, c := range r.checks {
			c.halt()
		}
		r.checks = map[string]*check{}
		r.pending = nil
	}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// halt stops c's timers and probes (under Runner.mu).
func (c *check) halt() {
	if c.ttl != nil {
		c.ttl.Stop()
	}
	if c.reap != nil {
		c.reap.Stop()
	}
	if c.stop != nil {
		c.stop()
	}
}

// current reports whether c is still the running check of its ID (under
// Runner.mu): a timer or probe of a check replaced or removed does nothing.
func (r *Runner) current(c *check) bool { return !r.closed && r.checks[c.def.ID] == c }

func (r *Runner) expire(c *check) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current(c) {
		r.setLocked(c, catalog.Critical, "TTL expired")
	}
}

// setLocked records c's new state; a change of status is reported, and
// starts or stops the wait for deregistration.
func (r *Runner) setLocked(c *check, status, output string) {
	output = truncate(output)
	changed := status != c.state.Status
	c.state = State{Status: status, Output: output}
	if !changed {
		return
	}
	r.emit(event{checkID: c.def.ID, state: c.state})
	if status == catalog.Critical {
		r.becameCritical(c)
	} else {
		c.criticalSince = time.Time{}
		if c.reap != nil {
			c.reap.Stop()
			c.reap = nil
		}
	}
	if r.cfg.Metrics != nil {
		r.cfg.Metrics.IncrCounterWithLabels([]string{"consul", "check_changes"}, 1, []metrics.Label{{Name: "status", Value: status}})
	}
}

// becameCritical starts the wait after which c's service is deregistered.
func (r *Runner) becameCritical(c *check) {
	c.criticalSince = time.Now()
	after := c.def.DeregisterCriticalServiceAfter
	if after <= 0 || c.def.ServiceID == "" {
		return
	}
	since := c.criticalSince
	c.reap = time.AfterFunc(after, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.current(c) && c.criticalSince.Equal(since) {
			r.log.Info("consul: deregistering a service whose check stayed critical", "service", c.def.ServiceID, "check", c.def.ID, "after", after)
			r.emit(event{serviceID: c.def.ServiceID})
		}
	})
}

// emit queues ev for delivery (under Runner.mu). A report replaces one of
// the same check not yet delivered, so the queue holds at most one report
// per check (and the deregistrations) however fast a client flips a TTL
// check.
func (r *Runner) emit(ev event) {
	if ev.serviceID == "" {
		r.pending = slices.DeleteFunc(r.pending, func(p event) bool { return p.serviceID == "" && p.checkID == ev.checkID })
	}
	r.pending = append(r.pending, ev)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// deliver tells Report and Deregister of the queued events, in order,
// with no lock held, until Close.
func (r *Runner) deliver() {
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		evs := r.pending
		r.pending = nil
		r.mu.Unlock()
		for _, ev := range evs {
			if r.ctx.Err() != nil {
				return
			}
			switch {
			case ev.serviceID != "":
				if r.cfg.Deregister != nil {
					r.cfg.Deregister(ev.serviceID)
				}
			case r.cfg.Report != nil:
				r.cfg.Report(ev.checkID, ev.state)
			}
		}
	}
}

func valid(status string) bool {
	return status == catalog.Passing || status == catalog.Warning || status == catalog.Critical
}

// truncate keeps at most MaxOutput bytes of s.
func truncate(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	return s[:MaxOutput]
}
