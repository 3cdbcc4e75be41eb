package bench

import (
	"context"
	"sync"
	"time"

	"github.com/namecast/namecast/routes"
)

// Arrivals records when each member of a set first saw one thing happen.
type Arrivals struct {
	mu    sync.Mutex
	start time.Time
	want  map[string]bool
	at    map[string]time.Time
	done  chan struct{}
	sched schedSample // at Start, for Outcome.Sched
	stall *stallProbe // from Start to Wait
}

// NewArrivals expects one arrival from each named member.
func NewArrivals(names []string) *Arrivals {
	a := &Arrivals{want: map[string]bool{}, at: map[string]time.Time{}, done: make(chan struct{})}
	for _, n := range names {
		a.want[n] = true
	}
	if len(names) == 0 {
		close(a.done)
	}
	return a
}

// Start marks the moment the trial's cause happened; call it right before
// triggering it, and Wait after: Start begins the stall probe (SchedWait)
// that Wait ends.
func (a *Arrivals) Start() {
	s, p := readSched(), beginStall()
	a.mu.Lock()
	a.start, a.sched, a.stall = time.Now(), s, p
	a.mu.Unlock()
}

// StartAt is Start for a cause that happened at t, before the watchers
// could be armed.
func (a *Arrivals) StartAt(t time.Time) {
	s, p := readSched(), beginStall()
	a.mu.Lock()
	a.start, a.sched, a.stall = t, s, p
	a.mu.Unlock()
}

// Mark records member's first arrival at t; later ones are ignored.
func (a *Arrivals) Mark(member string, t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.want[member] {
		return
	}
	if _, seen := a.at[member]; seen {
		return
	}
	a.at[member] = t
	if len(a.at) == len(a.want) {
		close(a.done)
	}
}

// Outcome is one trial's result.
type Outcome struct {
	Last     time.Duration   // until the last member saw it: the trial's figure
	Each     []time.Duration // every member's own delay, for the worst delivery
	Missing  int             // members that never saw it within the timeout
	TimedOut bool
	Sched    SchedWait // this process's scheduling waits from Start to the end
}

// Wait blocks until every member has seen it or timeout passes. A timed
// out trial's Last is the timeout.
func (a *Arrivals) Wait(ctx context.Context, timeout time.Duration) Outcome {
	select {
	case <-a.done:
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	now := readSched()
	a.mu.Lock()
	defer a.mu.Unlock()
	var o Outcome
	o.Sched = now.since(a.sched)
	o.Sched.Stall, a.stall = a.stall.end(), nil
	for _, t := range a.at {
		d := max(0, t.Sub(a.start))
		o.Each = append(o.Each, d)
		o.Last = max(o.Last, d)
	}
	if o.Missing = len(a.want) - len(a.at); o.Missing > 0 {
		o.TimedOut, o.Last = true, timeout
	}
	return o
}

// WatchTables arms one goroutine per agent that marks a's arrival as soon
// as cond holds on that agent's table, woken by the table's index rather
// than by polling. It returns once every watcher has checked cond once and
// is blocked, so the caller may Start and trigger; stop (cancel ctx) ends
// the watchers, and the returned wait blocks until they have.
func WatchTables(ctx context.Context, agents []*Agent, a *Arrivals, cond func(*routes.Table) bool) (wait func()) {
	var armed, wg sync.WaitGroup
	for _, ag := range agents {
		armed.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := ag.Table()
			first := true
			for {
				idx := t.Index()
				if cond(t) {
					a.Mark(ag.Name, time.Now())
					if first {
						armed.Done()
					}
					return
				}
				if first {
					armed.Done()
					first = false
				}
				t.Wait(ctx, idx)
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	armed.Wait()
	return wg.Wait
}
