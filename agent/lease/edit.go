package lease

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/namecast/namecast/routes"
)

// A log entry saves what a change names (leaseEdit), not the lease it
// leaves: the records a lease puts and the keys it lets go of, with its
// deadline, prefixes and state as they are now. A ZooKeeper session
// creating its ten-thousandth znode writes one record, as its first did;
// an entry of the whole lease (logEntry.Put) cost what the session held.
// Replay (foldLeases) applies each edit to the lease as the snapshot and
// the entries before it left it; a snapshot (leases.json) still holds
// every lease whole, and compaction bounds the log as before.

// leaseEdit is one lease's part of a change, as saved.
type leaseEdit struct {
	Door string `json:"door"`
	ID   string `json:"id"`
	// Prefixes, Deadline, Renewed and State are the lease's after the
	// change (State: the lease's as it was when nil).
	Prefixes []string        `json:"prefixes,omitempty"`
	Deadline time.Time       `json:"deadline,omitzero"`
	Renewed  time.Time       `json:"renewed,omitzero"`
	State    json.RawMessage `json:"state,omitempty"`
	// Puts are the records the lease holds once the change is applied,
	// new or replaced: a key its prefixes do not cover joins its Keys.
	Puts []routes.Record `json:"puts,omitempty"`
	// Deletes are keys the lease lets go of.
	Deletes []string `json:"deletes,omitempty"`
}

// folding is a lease being replayed: edits change it in maps, turned
// back into a savedLease once the log is read (flat).
type folding struct {
	keys map[string]bool          // nil until an edit: the savedLease's Keys
	recs map[string]routes.Record // by key; with keys
}

// apply applies edit e to sl, the lease as replayed so far (the zero
// savedLease: none yet), keeping its keys and records in f.
func (f *folding) apply(sl *savedLease, e leaseEdit) {
	if f.keys == nil {
		f.keys = make(map[string]bool, len(sl.Keys))
		f.recs = make(map[string]routes.Record, len(sl.Records))
		for _, k := range sl.Keys {
			f.keys[k] = true
		}
		for _, r := range sl.Records {
			f.recs[r.Key()] = r
		}
		sl.Keys, sl.Records = nil, nil
	}
	sl.Door, sl.ID = e.Door, e.ID
	sl.Prefixes, sl.Deadline, sl.Renewed = e.Prefixes, e.Deadline, e.Renewed
	if e.State != nil {
		sl.State = e.State
	}
	for _, k := range e.Deletes {
		delete(f.keys, k)
		delete(f.recs, k)
	}
	for _, r := range e.Puts {
		k := r.Key()
		if k == "" {
			continue
		}
		if !underPrefixes(sl.Prefixes, k) {
			f.keys[k] = true
		}
		f.recs[k] = r
	}
}

// flat sets sl's Keys and Records from f, in key order.
func (f *folding) flat(sl *savedLease) {
	if f.keys == nil {
		return
	}
	sl.Keys = make([]string, 0, len(f.keys))
	for k := range f.keys {
		sl.Keys = append(sl.Keys, k)
	}
	slices.Sort(sl.Keys)
	lease := sl.Lease
	lease.Keys = sl.Keys
	sl.Records = make([]routes.Record, 0, len(f.recs))
	for _, k := range slices.Sorted(maps.Keys(f.recs)) {
		if f.keys[k] || underPrefixes(lease.Prefixes, k) {
			sl.Records = append(sl.Records, f.recs[k])
		}
	}
}

// underPrefixes reports whether key is under one of prefixes (each ending
// with '/'; one that does not covers only itself, as Lease.Covers says).
func underPrefixes(prefixes []string, key string) bool {
	for _, p := range prefixes {
		if key == p || isPrefix(p) && strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
