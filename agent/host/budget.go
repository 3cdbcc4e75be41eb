package host

import (
	"errors"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// The budget of this agent's own records (Config.Budget, routes'
// budget.go) is checked in one place every door goes through, before
// anything is written:
//
//   - A door that saves a write before applying it (Hold, HoldAll) is
//     checked there, before the lease is written: a refused write writes
//     nothing. What it grows by is reserved until the door applies it, so
//     writes of other doors saved in between count it.
//   - Apply checks again, counting the reservations of the others, and
//     changes the table in the same step under the table's lock: the
//     check the write is measured by is the write's own.
//
// A reservation ends when an Apply touches one of its keys, or after
// reserveFor (a door that saved a write and then did not apply it: its
// client went away in between), so a lost one shrinks the budget for
// seconds, never for good.
const reserveFor = 10 * time.Second

// refusalLogEvery spaces the log lines of refused writes: one per
// interval, with the count since the last.
const refusalLogEvery = time.Minute

type reservation struct {
	keys   []string
	growth routes.Usage
	until  time.Time
}

// budget is the host's side of the budget; guarded by Local.mu.
type budget struct {
	reserved []*reservation
	// refusals since the last log line, and when that was.
	refusals int
	loggedAt time.Time
}

// settle ends the reservations of keys being applied, and those past
// their time, and returns what the rest reserve, and the leases' strings
// of the keys being applied (leaseStrings).
func (b *budget) settle(puts []routes.Record, deletes []string) (routes.Usage, map[string]string) {
	now := time.Now()
	touched := map[string]bool{}
	if len(b.reserved) > 0 {
		for _, r := range puts {
			touched[r.Key()] = true
		}
		for _, k := range deletes {
			touched[k] = true
		}
	}
	var pending routes.Usage
	var keys map[string]string
	kept := b.reserved[:0]
	for _, r := range b.reserved {
		if touchesAny(touched, r.keys) {
			for _, k := range r.keys {
				if touched[k] {
					if keys == nil {
						keys = map[string]string{}
					}
					keys[k] = k
				}
			}
			continue
		}
		if now.After(r.until) {
			continue
		}
		kept = append(kept, r)
		pending.Records += r.growth.Records
		pending.Bytes += r.growth.Bytes
	}
	clear(b.reserved[len(kept):])
	b.reserved = kept
	return pending, keys
}

func touchesAny(touched map[string]bool, keys []string) bool {
	for _, k := range keys {
		if touched[k] {
			return true
		}
	}
	return false
}

// reserve checks that the records the leases will cover fit the budget
// with every other reservation, and reserves what they grow by. What a
// lease stops covering that no other lease covers (lease.Store.Uncovered)
// counts as freed: the door withdraws it with the change (a Nacos 1.x
// instance marked unhealthy is a new URL in place of the old), so a swap
// of records at the very limit goes through. A refusal is a
// *routes.BudgetError.
func (h *Local) reserve(cs []lease.Change) error {
	if h.cfg.Budget == (routes.Budget{}) {
		return nil
	}
	var recs []routes.Record
	for _, c := range cs {
		if !c.Drop {
			recs = append(recs, c.Recs...)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var freed []string
	for _, c := range cs {
		if !c.Drop {
			freed = append(freed, h.leases.Uncovered(c.Lease)...)
		}
	}
	pending, _ := h.budget.settle(nil, nil)
	g, keys, err := h.table.CheckLocal(recs, freed, h.cfg.Budget, pending)
	if err != nil {
		h.refused(err)
		return err
	}
	keys = leaseStrings(cs, keys)
	if len(keys) > 0 && (g.Records > 0 || g.Bytes > 0) {
		h.budget.reserved = append(h.budget.reserved, &reservation{keys: keys, growth: g, until: time.Now().Add(reserveFor)})
	}
	return nil
}

// leaseStrings replaces each of keys by the leases' own string of it,
// which the table then keeps instead of a copy (Table.ApplyLocalWithin):
// a Dubbo URL's key is the whole URL, and a copy per holder doubled what
// an HTTP registration costs.
func leaseStrings(cs []lease.Change, keys []string) []string {
	if len(keys) == 0 {
		return keys
	}
	idx := make(map[string]int, len(keys))
	for i, k := range keys {
		idx[k] = i
	}
	for _, c := range cs {
		if i, ok := idx[c.Lease.ID]; ok {
			keys[i] = c.Lease.ID
		}
		for _, k := range c.Lease.Keys {
			if i, ok := idx[k]; ok {
				keys[i] = k
			}
		}
	}
	return keys
}

// unreserve ends the reservation of recs: their lease could not be
// written.
func (h *Local) unreserve(cs []lease.Change) {
	if h.cfg.Budget == (routes.Budget{}) {
		return
	}
	var recs []routes.Record
	for _, c := range cs {
		recs = append(recs, c.Recs...)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.budget.settle(recs, nil)
}

// refused counts a write refused by the budget and logs it, once per
// refusalLogEvery. h.mu must be held.
func (h *Local) refused(err error) {
	if !errors.Is(err, routes.ErrBudget) {
		return
	}
	if h.cfg.Metrics != nil {
		h.cfg.Metrics.IncrCounter([]string{"budget", "refused"}, 1)
	}
	h.budget.refusals++
	if now := time.Now(); now.Sub(h.budget.loggedAt) >= refusalLogEvery {
		h.log.Warn("refused writes past this agent's record budget", "refused", h.budget.refusals,
			"records", h.table.Usage(h.table.Local()).Records, "bytes", h.table.Usage(h.table.Local()).Bytes, "err", err)
		h.budget.refusals, h.budget.loggedAt = 0, now
	}
}
