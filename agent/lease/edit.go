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

// editOf is w as saved.
func editOf(w Write) leaseEdit {
	return leaseEdit{Door: w.Lease.Door, ID: w.Lease.ID, Prefixes: w.Lease.Prefixes, Deadline: w.Lease.Deadline,
		Renewed: w.Lease.Renewed, State: w.Lease.State, Puts: w.Puts, Deletes: w.Deletes}
}

// saveWrites is Write with a data dir: ws as one log entry of edits (a
// drop as a removal), written whole or not at all, then applied in
// memory, as HoldAll does with whole leases. It costs what ws names:
// neither the leases' other keys nor their records are read, except
// those of other leases that hold a record a write puts (othersHolding
// writes them whole with it, as Hold does).
func (ls *Store) saveWrites(ws []Write, keys map[string]string) (Saving, error) {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	stop := ls.frozen || ls.log == nil
	ls.mu.Unlock()
	var e logEntry
	var others []otherHold
	for _, w := range ws {
		if stop {
			break
		}
		k := leaseKey(w.Lease.Door, w.Lease.ID)
		if w.Drop {
			ls.mu.Lock()
			_, inFile := ls.saved[k]
			ls.mu.Unlock()
			if inFile {
				e.Drops = append(e.Drops, leaseRef{Door: w.Lease.Door, ID: w.Lease.ID})
			}
			continue
		}
		e.Edits = append(e.Edits, editOf(w))
		o, err := ls.othersHolding(k, w.Puts)
		if err != nil {
			return Saving{}, err
		}
		others = append(others, o...)
	}
	for _, o := range others {
		e.Also = append(e.Also, o.body)
	}
	if len(e.Edits) == 0 && len(e.Drops) == 0 {
		ls.mu.Lock()
		for _, w := range ws {
			ls.writeLocked(w)
			if w.Drop {
				delete(ls.saved, leaseKey(w.Lease.Door, w.Lease.ID))
			}
		}
		ls.noteKeysLocked(ws, keys)
		ls.mu.Unlock()
		if stop {
			return Saving{}, nil
		}
		return ls.inFlight(), nil
	}
	seq := ls.localSeq()
	wseq, err := ls.appendLeaseEntry(e)
	if err != nil {
		return Saving{}, err
	}
	ls.mu.Lock()
	var waits []string
	for _, w := range ws {
		k := leaseKey(w.Lease.Door, w.Lease.ID)
		ls.writeLocked(w)
		if w.Drop {
			delete(ls.saved, k)
			continue
		}
		delete(ls.lazy, k)
		ls.saved[k] = savedState{deadline: w.Lease.Deadline, seq: seq, wseq: wseq, edited: true}
		ls.pending[k] = pendingHold{seq: wseq, edit: &w}
		waits = append(waits, k)
	}
	waits = ls.markOthersLocked(waits, others, seq, wseq)
	ls.noteKeysLocked(ws, keys)
	ls.mu.Unlock()
	ls.compactIfLarge()
	return Saving{ls: ls, keys: waits, seq: wseq}, nil
}

// settleEdit saves the records edit w put as the table holds them once
// applied, where they differ from what was written (the table stamps
// some puts), as one more edit; it returns that entry's seq (0: none).
// saveMu held.
func (ls *Store) settleEdit(k string, w *Write) uint64 {
	var stamped []routes.Record
	for _, r := range w.Puts {
		if t, ok := ls.table.LocalRecord(r.Key()); ok && !sameRecord(t, r) {
			stamped = append(stamped, t)
		}
	}
	ls.mu.Lock()
	l, ok := ls.m[k]
	_, inFile := ls.saved[k]
	stop := !ok || !inFile || ls.frozen || ls.log == nil
	if !stop {
		l.Keys = nil // not saved: an edit names what changes
	}
	ls.mu.Unlock()
	if stop || len(stamped) == 0 {
		return 0
	}
	wseq, err := ls.appendLeaseEntry(logEntry{Edits: []leaseEdit{editOf(Write{Lease: l, Puts: stamped})}})
	if err != nil {
		// What was written restores the same records, unstamped.
		ls.logger.Warn("saving a lease's records as applied failed; the records as held are saved", "err", err)
		return 0
	}
	ls.compactIfLarge()
	return wseq
}

// writeRefresh saves a refresh of lease k's deadline, renewal and state
// (saveLazyLeases) as an edit naming no record, when its records are
// saved by edits as they are. It reports whether it did, and the entry's
// seq. saveMu held.
func (ls *Store) writeRefresh(k string) (done bool, wseq uint64, err error) {
	ls.mu.Lock()
	l, ok := ls.m[k]
	sv, inFile := ls.saved[k]
	_, held := ls.pending[k]
	stop := !ok || ls.frozen || ls.log == nil
	ls.mu.Unlock()
	if stop {
		return true, 0, nil
	}
	if !inFile || !sv.edited || held {
		return false, 0, nil
	}
	l.Keys = nil
	wseq, err = ls.appendLeaseEntry(logEntry{Edits: []leaseEdit{editOf(Write{Lease: l})}})
	if err != nil {
		return true, 0, err
	}
	ls.mu.Lock()
	ls.saved[k] = savedState{deadline: l.Deadline, seq: sv.seq, wseq: wseq, edited: true}
	delete(ls.lazy, k)
	ls.mu.Unlock()
	ls.compactIfLarge()
	return true, wseq, nil
}

// coverOf is l.Covers in a look-up per key, not a pass over l's keys
// (a restored session of thousands of znodes).
func coverOf(l Lease) func(key string) bool {
	keys := make(map[string]bool, len(l.Keys))
	for _, k := range l.Keys {
		keys[k] = true
	}
	return func(key string) bool { return keys[key] || underPrefixes(l.Prefixes, key) }
}
