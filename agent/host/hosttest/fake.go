// Package hosttest is the host.Host of a door's own tests: an agent
// reduced to one routes.Table, a lease table in memory, and knobs.
//
//   - New is one agent; Cluster is several whose changes reach each
//     other's tables at once, as a converged cluster's would (HoldDeltas
//     and Deliver hand them on later, in any order, as gossip may).
//   - Local records and rules change the table; leases are kept in a map
//     (Lease, Leases) and the leases of a restart are handed in with
//     Restore.
//   - Knobs: NotYet (not synced yet), RulesErr and LeaseErr (a full
//     disk), Budget (the agent's bound on its own records), BeforeApply
//     (hold a registration), KeepEvents and Events (what was withdrawn
//     and dropped, in order).
//
// Every method is safe for concurrent use.
package hosttest

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// Fake is the host; Routes must be set (New and Cluster do).
type Fake struct {
	Routes *routes.Table
	// NotYet makes Ready false while set.
	NotYet atomic.Bool
	// RulesErr, when set, fails every ApplyRules with it (a full disk).
	RulesErr atomic.Pointer[error]
	// LeaseErr, when set, fails every lease write with it (PutLease,
	// DropLease, Hold, Drop, HoldAll, Undo; Forget never fails).
	LeaseErr atomic.Pointer[error]
	// Budget bounds the local records as the agent's host does: Apply,
	// Hold and HoldAll refuse what would pass it. Set before use.
	Budget routes.Budget
	// BeforeApply, when set, runs at the start of every Apply.
	BeforeApply atomic.Pointer[func()]
	// HoldDeltas, while set, keeps this agent's changes from its peers
	// until Deliver hands them on.
	HoldDeltas atomic.Bool
	// KeepEvents, while set, has Events record what happens.
	KeepEvents atomic.Bool

	mu       sync.Mutex
	peers    []*Fake
	held     []routes.Delta
	leases   map[string]lease.Lease // by door + "/" + id
	restored []lease.Lease
	events   []string
}

var _ host.Host = (*Fake)(nil)

// New is a Fake over table.
func New(table *routes.Table) *Fake { return &Fake{Routes: table} }

// Cluster is one Fake per name, each over its own table (origin name,
// incarnation its place from 1), whose changes reach the others' tables
// when made.
func Cluster(names ...string) []*Fake {
	var fs []*Fake
	for i, n := range names {
		fs = append(fs, New(routes.NewTable(n, uint64(i+1))))
	}
	for _, f := range fs {
		for _, p := range fs {
			if p != f {
				f.peers = append(f.peers, p)
			}
		}
	}
	return fs
}

// SetErr sets (or, with nil, clears) an error knob: RulesErr or LeaseErr.
func SetErr(knob *atomic.Pointer[error], err error) {
	if err == nil {
		knob.Store(nil)
		return
	}
	knob.Store(&err)
}

func errOf(knob *atomic.Pointer[error]) error {
	if err := knob.Load(); err != nil {
		return *err
	}
	return nil
}

// Apply changes the local records within Budget and hands the change to
// the peers (or holds it, HoldDeltas); each delete is an event
// "withdraw KEY".
func (f *Fake) Apply(puts []routes.Record, deletes []string) (bool, error) {
	if hook := f.BeforeApply.Load(); hook != nil {
		(*hook)()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range deletes {
		f.eventLocked("withdraw " + k)
	}
	d, ok, err := f.Routes.ApplyLocalWithin(puts, deletes, f.Budget, routes.Usage{}, nil)
	if err != nil || !ok {
		return false, err
	}
	f.sendLocked(d)
	return true, nil
}

// ApplyRules changes cluster-scoped records (or fails with RulesErr) and
// hands the change to the peers.
func (f *Fake) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := errOf(&f.RulesErr); err != nil {
		return false, err
	}
	d, ok := f.Routes.ApplyRules(puts, deletes)
	if ok {
		f.sendLocked(d)
	}
	return ok, nil
}

func (f *Fake) sendLocked(d routes.Delta) {
	if f.HoldDeltas.Load() {
		f.held = append(f.held, d)
		return
	}
	for _, p := range f.peers {
		p.Routes.Apply(d)
	}
}

// Deliver hands the held changes' ops that pick selects to every peer,
// one delta per op, and keeps the others held; a nil pick hands on every
// held change as it was made.
func (f *Fake) Deliver(pick func(routes.Op) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pick == nil {
		for _, d := range f.held {
			for _, p := range f.peers {
				p.Routes.Apply(d)
			}
		}
		f.held = nil
		return
	}
	var keep []routes.Delta
	for _, d := range f.held {
		rest := d
		rest.Ops = nil
		for _, op := range d.Ops {
			if !pick(op) {
				rest.Ops = append(rest.Ops, op)
				continue
			}
			one := d
			one.Ops = []routes.Op{op}
			for _, p := range f.peers {
				p.Routes.Apply(one)
			}
		}
		if len(rest.Ops) > 0 {
			keep = append(keep, rest)
		}
	}
	f.held = keep
}

// Lose forgets the held changes: gossip never carries them.
func (f *Fake) Lose() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = nil
}

func (f *Fake) Table() *routes.Table { return f.Routes }
func (f *Fake) Ready() bool          { return !f.NotYet.Load() }

func (f *Fake) LocalRecords(prefix string) []routes.Record { return f.Routes.LocalRecords(prefix) }

// RTT knows no distance: routes keep their order.
func (f *Fake) RTT(string) (time.Duration, bool) { return 0, false }

// PutLease keeps l (or fails with LeaseErr).
func (f *Fake) PutLease(l lease.Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.putLocked(l)
}

func (f *Fake) putLocked(l lease.Lease) error {
	if err := errOf(&f.LeaseErr); err != nil {
		return err
	}
	if f.leases == nil {
		f.leases = map[string]lease.Lease{}
	}
	f.leases[l.Door+"/"+l.ID] = l
	return nil
}

// DropLease forgets a lease (or fails with LeaseErr); an event "drop ID".
func (f *Fake) DropLease(door, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropLocked(door, id)
}

func (f *Fake) dropLocked(door, id string) error {
	if err := errOf(&f.LeaseErr); err != nil {
		return err
	}
	delete(f.leases, door+"/"+id)
	f.eventLocked("drop " + id)
	return nil
}

// Hold is PutLease once recs fit the Budget, as the agent's host's is
// before the door applies them.
func (f *Fake) Hold(l lease.Lease, recs []routes.Record) (lease.Saving, error) {
	if _, _, err := f.Routes.CheckLocal(recs, nil, f.Budget, routes.Usage{}); err != nil {
		return lease.Saving{}, err
	}
	return lease.Saving{}, f.PutLease(l)
}

// Drop is DropLease, before the door withdraws the records.
func (f *Fake) Drop(door, id string) (lease.Saving, error) {
	return lease.Saving{}, f.DropLease(door, id)
}

// Forget drops the lease whatever LeaseErr says, as the agent's does.
func (f *Fake) Forget(door, id string) lease.Saving {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.leases, door+"/"+id)
	f.eventLocked("drop " + id)
	return lease.Saving{}
}

// HoldAll is Hold and Drop of each change, once all their records fit
// the Budget.
func (f *Fake) HoldAll(cs []lease.Change) (lease.Saving, error) {
	var recs []routes.Record
	for _, c := range cs {
		recs = append(recs, c.Recs...)
	}
	if _, _, err := f.Routes.CheckLocal(recs, nil, f.Budget, routes.Usage{}); err != nil {
		return lease.Saving{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		var err error
		if c.Drop {
			err = f.dropLocked(c.Lease.Door, c.Lease.ID)
		} else {
			err = f.putLocked(c.Lease)
		}
		if err != nil {
			return lease.Saving{}, err
		}
	}
	return lease.Saving{}, nil
}

// Write keeps each lease as its write leaves it (a drop: event "drop
// ID") and applies the records (Apply), once they fit the Budget with
// the deletes counted as freed; then it calls unlock, as the agent's
// host does. A refusal (Budget, LeaseErr) changes nothing and does not
// call unlock.
func (f *Fake) Write(unlock func(), ws ...lease.Write) error {
	var puts []routes.Record
	var deletes []string
	for _, w := range ws {
		puts = append(puts, w.Puts...)
		deletes = append(deletes, w.Deletes...)
	}
	if _, _, err := f.Routes.CheckLocal(puts, deletes, f.Budget, routes.Usage{}); err != nil {
		return err
	}
	f.mu.Lock()
	if err := errOf(&f.LeaseErr); err != nil {
		f.mu.Unlock()
		return err
	}
	if f.leases == nil {
		f.leases = map[string]lease.Lease{}
	}
	for _, w := range ws {
		k := w.Lease.Door + "/" + w.Lease.ID
		if l := f.leases[k].After(w); l.Door != "" {
			f.leases[k] = l
		} else {
			delete(f.leases, k)
			f.eventLocked("drop " + w.Lease.ID)
		}
	}
	f.mu.Unlock()
	if len(puts)+len(deletes) > 0 {
		if _, err := f.Apply(puts, deletes); err != nil {
			return err
		}
	}
	if unlock != nil {
		unlock()
	}
	return nil
}

// Undo puts back what a HoldAll changed: here, HoldAll again.
func (f *Fake) Undo(cs []lease.Change) (lease.Saving, error) { return f.HoldAll(cs) }

// Restore sets the leases RestoredLeases hands out, as an agent
// restarted with its data dir would have them.
func (f *Fake) Restore(ls ...lease.Lease) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restored = append(f.restored, ls...)
}

// RestoredLeases hands door its leases given to Restore, once.
func (f *Fake) RestoredLeases(door string) []lease.Lease {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out, keep []lease.Lease
	for _, l := range f.restored {
		if l.Door == door {
			out = append(out, l)
		} else {
			keep = append(keep, l)
		}
	}
	f.restored = keep
	return out
}

// Lease is the lease door holds under id.
func (f *Fake) Lease(door, id string) (lease.Lease, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.leases[door+"/"+id]
	return l, ok
}

// Leases are the leases held, in no order.
func (f *Fake) Leases() []lease.Lease {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []lease.Lease
	for _, l := range f.leases {
		out = append(out, l)
	}
	return out
}

func (f *Fake) eventLocked(e string) {
	if f.KeepEvents.Load() {
		f.events = append(f.events, e)
	}
}

// Events are, since KeepEvents was set, what Apply withdrew ("withdraw KEY") and the leases dropped
// ("drop ID"), in order.
func (f *Fake) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}
