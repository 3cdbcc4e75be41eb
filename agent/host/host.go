// Package host is what an agent gives every door (the RocketMQ NameServer
// port, the ZooKeeper port, the HTTP API): the one way a door changes the
// agent's records, reads the replicated table, learns whether the agent
// has synced with its cluster, and holds records for its clients.
//
// A door keeps its own protocol state (connections, sessions, TTLs) and
// turns it into records through a Host:
//
//   - Apply changes this agent's own records: they live as long as the
//     agent holds them and leave with it. ApplyRules changes cluster-scoped
//     records (Dubbo dynamic=false URLs, RocketMQ KV config, persistent
//     znodes), which belong to no agent. Both gossip the change.
//   - Table and LocalRecords read the replicated table (its views, Index,
//     Wait, OnChange) and this agent's own records; RTT estimates the
//     round trip to another agent (a topic's route is served nearest
//     first: routes.TopicRoute.NearestFirst).
//   - Ready says whether the first sync with the cluster is done, so an
//     empty answer means "none" rather than "not learned yet".
//   - Write changes records clients hold in one call: saves their
//     leases, applies the records, lets go of the door's lock and waits
//     for the disk (write.go).
//   - Hold, HoldAll, PutLease, Drop, DropLease, Forget, Undo and
//     RestoredLeases hold a client's records across the agent's restart
//     (package lease); an error means the data dir could not save the
//     change, and the door refuses it. Hold and Drop write before the door changes anything
//     and return a lease.Saving the door waits for outside its own lock,
//     so concurrent writers share one fsync.
//
// A record two doors hold is withdrawn with its last holder (holders.go),
// and when one lets go the table serves what the other last wrote
// (shared.go).
//
// Local is the Host of one agent; a door's tests hand it a fake over a
// bare routes.Table instead (package hosttest).
package host

import (
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// Host is what every door is given (see the package comment).
type Host interface {
	// Apply changes this agent's own records and gossips the change; false
	// means nothing changed. An error (routes.ErrBudget: past the agent's
	// budget for its own records) means nothing changed, and goes out
	// through the door; a change that grows neither the number nor the
	// bytes of the agent's records (a delete, a replacement no larger)
	// never fails.
	Apply(puts []routes.Record, deletes []string) (ok bool, err error)
	// ApplyRules changes cluster-scoped records and gossips the change; an
	// error means nothing changed anywhere, and goes out through the door.
	ApplyRules(puts []routes.Record, deletes []string) (ok bool, err error)
	// Table is the replicated table (views, Index, Wait, OnChange).
	Table() *routes.Table
	// LocalRecords lists this agent's own records under a key prefix.
	LocalRecords(prefix string) []routes.Record
	// RTT estimates the round trip to the agent named origin; false when
	// it is not known (yet).
	RTT(origin string) (time.Duration, bool)
	// Ready reports whether the first sync with the cluster is done.
	Ready() bool
	// Write changes records its clients hold, naming only what changes:
	// saves the leases, applies the records, calls unlock, and waits
	// until the change is on disk (write.go). An error before the apply
	// (routes.ErrBudget, or the data dir refused it) means nothing
	// changed and unlock was not called; ErrUnsaved, that the change is
	// made but not on disk.
	Write(unlock func(), ws ...lease.Write) error
	// Leases keep a door's clients' records across the agent's restart;
	// Hold saves one before the door applies what it covers, so a change
	// that cannot be saved changes nothing.
	lease.Holder
}

// Config is what Local is built from. Only Table is required.
type Config struct {
	// Table is the agent's route table.
	Table *routes.Table
	// Leases is the agent's lease store; nil keeps leases in memory only.
	Leases *lease.Store
	// Publish gossips a change of the table; nil gossips nothing.
	Publish func(routes.Delta)
	// RTT estimates the round trip to the agent named origin; nil knows
	// none.
	RTT func(origin string) (time.Duration, bool)
	// Rules writes cluster-scoped records: the agent's rule store, which
	// bounds them, saves them and gossips them. Nil applies them to the
	// table and gossips them (tests).
	Rules func(puts []routes.Record, deletes []string) (bool, error)
	// Ready reports whether the first sync is done; nil: always.
	Ready func() bool
	// Metrics counts local changes; nil counts nothing.
	Metrics *metrics.Metrics
	// Logger gets what a Host has to say; nil discards it.
	Logger *slog.Logger
	// Budget bounds this agent's own records (budget.go); zero: none.
	Budget routes.Budget
}

// Local is the Host of one agent.
type Local struct {
	cfg    Config
	table  *routes.Table
	leases *lease.Store
	log    *slog.Logger
	mu     sync.Mutex // one change of our own records at a time, gossiped in order
	// shared is what each door holding a record with another door last
	// wrote of it (shared.go), under mu.
	shared   map[string]*shared
	writeSeq uint64
	doorBuf  []string
	budget   budget // guarded by mu
}

var _ Host = (*Local)(nil)

// New makes the Host of the agent described by cfg.
func New(cfg Config) *Local {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Leases == nil {
		cfg.Leases = lease.NewStore("", cfg.Table, cfg.Logger)
	}
	return &Local{cfg: cfg, table: cfg.Table, leases: cfg.Leases, log: cfg.Logger}
}

// Apply changes this agent's own records and gossips the change; ok is
// false when nothing changed.
func (h *Local) Apply(puts []routes.Record, deletes []string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.applyLocked(puts, deletes, nil)
}

// applyLocked is Apply with h.mu held: within the budget, counting what
// other doors' saved writes reserved, the check and the change one step.
// keys (may be nil) are strings of put keys a lease keeps, which the
// table then keeps instead of a copy: a Dubbo URL's key is the whole
// URL, and a copy per holder doubled what an HTTP registration costs.
func (h *Local) applyLocked(puts []routes.Record, deletes []string, keys map[string]string) (bool, error) {
	pending, reserved := h.budget.settle(puts, deletes)
	if keys == nil {
		keys = reserved
	} else {
		for k, s := range reserved {
			keys[k] = s
		}
	}
	d, ok, err := h.table.ApplyLocalWithin(puts, deletes, h.cfg.Budget, pending, keys)
	if err != nil {
		h.refused(err)
		return false, err
	}
	if ok {
		h.publish(d)
		if h.cfg.Metrics != nil {
			h.cfg.Metrics.IncrCounter([]string{"routes", "local_changes"}, 1)
		}
	}
	return ok, nil
}

func (h *Local) publish(d routes.Delta) {
	if h.cfg.Publish != nil {
		h.cfg.Publish(d)
	}
}

// ApplyRules changes cluster-scoped records (rules, KV config) through
// the agent's rule store (Config.Rules): ok is false when nothing changed;
// an error (past the rules' bound, or not saved) means nothing changed
// anywhere.
func (h *Local) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	if h.cfg.Rules != nil {
		return h.cfg.Rules(puts, deletes)
	}
	d, ok := h.table.ApplyRules(puts, deletes)
	if ok {
		h.publish(d)
	}
	return ok, nil
}

// Table is the agent's route table.
func (h *Local) Table() *routes.Table { return h.table }

// LocalRecords lists this agent's own records under a key prefix.
func (h *Local) LocalRecords(prefix string) []routes.Record { return h.table.LocalRecords(prefix) }

// RTT estimates the round trip to the agent named origin (Config.RTT).
func (h *Local) RTT(origin string) (time.Duration, bool) {
	if h.cfg.RTT == nil {
		return 0, false
	}
	return h.cfg.RTT(origin)
}

// Ready reports whether the agent has finished its first sync with the
// cluster.
func (h *Local) Ready() bool { return h.cfg.Ready == nil || h.cfg.Ready() }

// Leases are the leases held now (lease.Store.Leases).
func (h *Local) Leases() []lease.Lease { return h.leases.Leases() }

// PutLease records or refreshes a lease (lease.Holder).
func (h *Local) PutLease(l lease.Lease) error { return h.leases.PutLease(l) }

// Hold writes a lease with the records it will cover before the door
// applies them (lease.Store.Hold).
func (h *Local) Hold(l lease.Lease, recs []routes.Record) (lease.Saving, error) {
	cs := []lease.Change{{Lease: l, Recs: recs}}
	if err := h.reserve(cs); err != nil {
		return lease.Saving{}, err
	}
	sv, err := h.leases.Hold(l, recs)
	if err != nil {
		h.unreserve(cs)
	}
	return sv, err
}

// Drop writes a lease's removal before the door withdraws its records
// (lease.Store.Drop).
func (h *Local) Drop(door, id string) (lease.Saving, error) { return h.leases.Drop(door, id) }

// DropLease forgets a lease, durably (lease.Holder).
func (h *Local) DropLease(door, id string) error { return h.leases.DropLease(door, id) }

// Forget forgets a lease whose client let go (lease.Store.Forget).
func (h *Local) Forget(door, id string) lease.Saving { return h.leases.Forget(door, id) }

// HoldAll is Hold and Drop of several leases as one change
// (lease.Store.HoldAll).
func (h *Local) HoldAll(cs []lease.Change) (lease.Saving, error) {
	if err := h.reserve(cs); err != nil {
		return lease.Saving{}, err
	}
	sv, err := h.leases.HoldAll(cs)
	if err != nil {
		h.unreserve(cs)
	}
	return sv, err
}

// Undo puts back what a HoldAll changed (lease.Store.Undo).
func (h *Local) Undo(cs []lease.Change) (lease.Saving, error) { return h.leases.Undo(cs) }

// RestoredLeases hands a door the leases restored at start (lease.Holder).
func (h *Local) RestoredLeases(door string) []lease.Lease { return h.leases.RestoredLeases(door) }
