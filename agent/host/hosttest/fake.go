// Package hosttest is a host.Host for a door's own tests: an agent
// reduced to one routes.Table. Local records and rules change the table
// directly and are gossiped nowhere; leases are accepted and kept
// nowhere. Knobs let a test make the agent not yet synced or its rule
// store refuse writes (a full disk). A test that needs more (peers, a
// lease table) embeds Fake and overrides the methods it needs.
package hosttest

import (
	"sync/atomic"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// Fake is the host; Routes must be set (New does).
type Fake struct {
	Routes *routes.Table
	// NotYet makes Ready false while set.
	NotYet atomic.Bool
	// RulesErr, when set, fails every ApplyRules with it (a full disk).
	RulesErr atomic.Pointer[error]
	// Budget bounds the local records as the agent's host does: Apply,
	// Hold and HoldAll refuse what would pass it. Set before use.
	Budget routes.Budget
}

var _ host.Host = (*Fake)(nil)

// New is a Fake over table.
func New(table *routes.Table) *Fake { return &Fake{Routes: table} }

func (f *Fake) Apply(puts []routes.Record, deletes []string) (bool, error) {
	_, ok, err := f.Routes.ApplyLocalWithin(puts, deletes, f.Budget, routes.Usage{}, nil)
	return ok, err
}

func (f *Fake) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	if err := f.RulesErr.Load(); err != nil {
		return false, *err
	}
	_, ok := f.Routes.ApplyRules(puts, deletes)
	return ok, nil
}

func (f *Fake) Table() *routes.Table { return f.Routes }
func (f *Fake) Ready() bool          { return !f.NotYet.Load() }

// The rest of host.Host: reads of the table, and no leases kept.
func (f *Fake) LocalRecords(prefix string) []routes.Record { return f.Routes.LocalRecords(prefix) }
func (f *Fake) TopicRoute(topic string) (routes.TopicRoute, bool) {
	return f.Routes.TopicRoute(topic)
}
func (f *Fake) PutLease(lease.Lease) error      { return nil }
func (f *Fake) DropLease(door, id string) error { return nil }
func (f *Fake) Hold(_ lease.Lease, recs []routes.Record) (lease.Saving, error) {
	_, _, err := f.Routes.CheckLocal(recs, nil, f.Budget, routes.Usage{})
	return lease.Saving{}, err
}
func (f *Fake) Drop(string, string) (lease.Saving, error) { return lease.Saving{}, nil }
func (f *Fake) Forget(string, string) lease.Saving        { return lease.Saving{} }
func (f *Fake) RestoredLeases(door string) []lease.Lease  { return nil }
func (f *Fake) HoldAll(cs []lease.Change) (lease.Saving, error) {
	var recs []routes.Record
	for _, c := range cs {
		recs = append(recs, c.Recs...)
	}
	_, _, err := f.Routes.CheckLocal(recs, nil, f.Budget, routes.Usage{})
	return lease.Saving{}, err
}
func (f *Fake) Undo([]lease.Change) (lease.Saving, error) { return lease.Saving{}, nil }
