package routes

import (
	"errors"
	"fmt"
)

// A budget bounds what one origin's records may cost: their number and
// their bytes (RecordSize). The agent's own doors are refused past it
// (ApplyLocalWithin), before anything is written; a replica holds no more
// of another origin than the same budget (receive.go), so one faulty or
// misconfigured agent cannot fill every other. Replacing a record by one
// no larger, and deleting, are never refused: a client can always
// withdraw.

// Budget is the bound on one origin's records; a zero field is no bound.
type Budget struct {
	Records int   // live records
	Bytes   int64 // their RecordSize, summed
}

// Usage is what one origin's records cost now.
type Usage struct {
	Records int
	Bytes   int64
}

// within reports whether u fits b.
func (b Budget) within(u Usage) bool {
	return (b.Records <= 0 || u.Records <= b.Records) && (b.Bytes <= 0 || u.Bytes <= b.Bytes)
}

// ErrBudget is the error of a write refused because this agent's own
// records would pass its budget (doors tell it apart: HTTP 507, ZooKeeper
// QUOTAEXCEEDED, Nacos OVER_THRESHOLD, RocketMQ SYSTEM_ERROR).
var ErrBudget = errors.New("record budget reached")

// BudgetError says which bound a refused write would pass, by the
// agent's flag names, so every door can say what to change.
type BudgetError struct {
	Budget Budget
	After  Usage // what the agent's records would have cost
}

func (e *BudgetError) Error() string {
	if e.Budget.Records > 0 && e.After.Records > e.Budget.Records {
		return fmt.Sprintf("%v: this write would take this agent's records to %d, over --max-records=%d; withdraw registrations no longer used, or raise --max-records",
			ErrBudget, e.After.Records, e.Budget.Records)
	}
	return fmt.Sprintf("%v: this write would take this agent's records to %d bytes, over --max-records-mib=%d (%d bytes); withdraw registrations no longer used, or raise --max-records-mib",
		ErrBudget, e.After.Bytes, e.Budget.Bytes>>20, e.Budget.Bytes)
}

func (e *BudgetError) Unwrap() error { return ErrBudget }

// RecordSize is what holding one record costs, as budgets count it: its
// key (which holds a URL's text, a znode's path, a topic's name), the
// content the key does not hold, and 64 for the rest. RuleSize is the
// same count for rules.
func RecordSize(key string, r Record) int {
	n := 64 + len(key)
	switch {
	case r.Broker != nil:
		b := r.Broker
		n += len(b.Cluster) + len(b.Addr) + len(b.HAAddr) + len(b.Zone) + len(b.Filters)
	case r.URL != nil:
		n += len(r.URL.Path) + len(r.URL.Data)
	case r.KV != nil:
		n += len(r.KV.Value)
	case r.Znode != nil:
		n += len(r.Znode.Part) + len(r.Znode.Data)
	case r.Mapping != nil:
		n += len(r.Mapping.Bname) + len(r.Mapping.Scope) + len(r.Mapping.IDs)
	}
	return n
}

// size is RecordSize of a live entry.
func (e *entry) size() int64 { return int64(RecordSize(e.key, e.record())) }

// Usage is what the table holds of origin.
func (t *Table) Usage(origin string) Usage {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.origins[origin]
	if !ok {
		return Usage{}
	}
	return st.usage()
}

func (st *originState) usage() Usage { return Usage{Records: st.live.len(), Bytes: st.bytes} }

// growth is what applying puts and deletes would add to st's usage:
// negative where they free more than they take.
func (st *originState) growth(puts []Record, deletes []string) Usage {
	var g Usage
	seen := map[string]bool{}
	for _, r := range puts {
		key := r.Key()
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		g.Bytes += int64(RecordSize(key, r))
		if e, ok := st.live.get(key); ok {
			g.Bytes -= e.size()
		} else {
			g.Records++
		}
	}
	for _, key := range deletes {
		if seen[key] {
			continue
		}
		seen[key] = true
		if e, ok := st.live.get(key); ok {
			g.Records--
			g.Bytes -= e.size()
		}
	}
	return g
}

// ApplyLocalWithin is ApplyLocal within budget b, its check and its change
// one step under the table's lock: a change that would take this agent's
// records past b, counting pending (what writes already promised and not
// yet applied), and that grows them, is refused with a *BudgetError and
// changes nothing. A change that grows neither their number nor their
// bytes is always made.
//
// keys, when it has one, is the caller's own copy of a put's key (the
// lease that holds the record names it): the table keeps that string
// rather than one more copy of its bytes, since a Dubbo URL's key is the
// whole URL.
func (t *Table) ApplyLocalWithin(puts []Record, deletes []string, b Budget, pending Usage, keys map[string]string) (Delta, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.origins[t.local]
	if err := st.check(puts, deletes, b, pending); err != nil {
		return Delta{Origin: t.local, Inc: st.inc}, false, err
	}
	t.keys = keys
	d, ok := t.applyLocalLocked(puts, deletes)
	t.keys = nil
	return d, ok, nil
}

// CheckLocal is the check of ApplyLocalWithin alone, for a door's write
// that is saved before it is applied: the host reserves what it grows by
// (returned, with the keys that grow) until it is applied.
func (t *Table) CheckLocal(puts []Record, deletes []string, b Budget, pending Usage) (Usage, []string, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st := t.origins[t.local]
	if err := st.check(puts, deletes, b, pending); err != nil {
		return Usage{}, nil, err
	}
	var grown []string
	for _, r := range puts {
		key := r.Key()
		if e, ok := st.live.get(key); key != "" && (!ok || int64(RecordSize(key, r)) > e.size()) {
			grown = append(grown, key)
		}
	}
	return st.growth(puts, deletes), grown, nil
}

func (st *originState) check(puts []Record, deletes []string, b Budget, pending Usage) error {
	if b == (Budget{}) {
		return nil
	}
	g := st.growth(puts, deletes)
	if g.Records <= 0 && g.Bytes <= 0 {
		return nil
	}
	u := st.usage()
	after := Usage{Records: u.Records + pending.Records + g.Records, Bytes: u.Bytes + pending.Bytes + g.Bytes}
	// Past a bound the write grows, refused; one it shrinks or leaves
	// is let through, so a swap of a big record for a small one works
	// at the count limit.
	if (b.Records > 0 && g.Records > 0 && after.Records > b.Records) || (b.Bytes > 0 && g.Bytes > 0 && after.Bytes > b.Bytes) {
		return &BudgetError{Budget: b, After: after}
	}
	return nil
}
