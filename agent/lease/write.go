package lease

import (
	"slices"

	"github.com/namecast/namecast/routes"
)

// Write is one lease's part of a change a door makes (Store.Write),
// naming only what changes: the records the lease puts, and the keys it
// deletes. A write costs what it names, whatever the lease already holds
// (a ZooKeeper session creating its ten-thousandth znode costs what its
// first did).
type Write struct {
	// Lease names the lease (Door, ID) and sets its Deadline, Renewed
	// and Prefixes as given; a nil State keeps the one it has. Its Keys
	// are not read: the lease's keys are those it had, with the keys of
	// Puts its Prefixes do not cover joined, and Deletes gone.
	Lease Lease
	// Puts are records the lease holds once applied, new or replaced.
	Puts []routes.Record
	// Deletes are keys of records the lease lets go of, to withdraw
	// (unless another door's lease holds them, package host).
	Deletes []string
	// Drop: the lease goes (Puts must be empty); Deletes are what it held.
	Drop bool
}

// Write saves writes before the door applies them, as Hold and Drop do
// (step 1 and 2 of the package comment): an error means nothing was
// written and nothing changed, and the door applies nothing; otherwise
// the door applies each write's puts and deletes, lets go of its lock,
// and waits for the Saving before it answers. Several writes are one
// change, saved whole or not at all (HoldAll).
//
// A write changes only the keys it names, in memory and on disk: a data
// dir saves it as an edit (edit.go).
//
// keys, when not nil, gets each put's key as the string the lease keeps
// of it, by itself, so the table can keep the same bytes rather than a
// copy (routes.Table.ApplyLocalWithin).
func (ls *Store) Write(ws []Write, keys map[string]string) (Saving, error) {
	ls.mu.Lock()
	stop := ls.dir == "" || ls.frozen
	if stop {
		for _, w := range ws {
			ls.writeLocked(w)
		}
		ls.noteKeysLocked(ws, keys)
	}
	ls.mu.Unlock()
	if stop {
		return Saving{}, nil
	}
	if len(ws) == 1 {
		if sv, ok := ls.refreshOnly(ws[0]); ok {
			return sv, nil
		}
	}
	return ls.saveWrites(ws, keys)
}

// noteKeysLocked sets in keys (when not nil) the string each lease of ws
// keeps of a key it puts. ls.mu held.
func (ls *Store) noteKeysLocked(ws []Write, keys map[string]string) {
	if keys == nil {
		return
	}
	for _, w := range ws {
		k := leaseKey(w.Lease.Door, w.Lease.ID)
		l := ls.m[k]
		for _, r := range w.Puts {
			key := r.Key()
			if i, ok := ls.held[key][k]; ok {
				keys[key] = l.Keys[i]
			}
		}
	}
}

// refreshOnly is Write of w with a data dir when w names no record and
// only refreshes a lease whose records are saved: its deadline, renewal
// or state, saved lazily as PutLease saves them, in what w names.
func (ls *Store) refreshOnly(w Write) (Saving, bool) {
	if w.Drop || len(w.Puts) > 0 || len(w.Deletes) > 0 {
		return Saving{}, false
	}
	k := leaseKey(w.Lease.Door, w.Lease.ID)
	ls.mu.Lock()
	old, had := ls.m[k]
	sv, inFile := ls.saved[k]
	_, held := ls.pending[k]
	if !had || !inFile || held || !slices.Equal(old.Prefixes, w.Lease.Prefixes) {
		ls.mu.Unlock()
		return Saving{}, false
	}
	same := w.Lease.State == nil || string(w.Lease.State) == string(old.State)
	ls.editLocked(k, w.Lease, nil, nil)
	delete(ls.dropLater, k)
	l := ls.m[k]
	ls.mu.Unlock()
	ls.refresh(k, same, l, sv)
	return Saving{ls: ls, seq: sv.wseq}, true // the entry that wrote them may be on its way still
}

// writeLocked applies w in memory. ls.mu held.
func (ls *Store) writeLocked(w Write) {
	k := leaseKey(w.Lease.Door, w.Lease.ID)
	if w.Drop {
		ls.forgetLocked(k)
		return
	}
	add := make([]string, 0, len(w.Puts))
	for _, r := range w.Puts {
		if key := r.Key(); key != "" {
			add = append(add, key)
		}
	}
	ls.editLocked(k, w.Lease, add, w.Deletes)
	delete(ls.dropLater, k)
	delete(ls.pending, k)
}

// whole is w as the Change of the whole lease it leaves, with the
// records the lease covers once w is applied to the table.
func (ls *Store) whole(w Write) Change {
	if w.Drop {
		return Change{Lease: Lease{Door: w.Lease.Door, ID: w.Lease.ID}, Drop: true}
	}
	ls.mu.Lock()
	l, _ := ls.leaseLocked(leaseKey(w.Lease.Door, w.Lease.ID))
	ls.mu.Unlock()
	l = l.After(w)
	return Change{Lease: l, Recs: l.RecordsAfter(ls.table, w.Puts, w.Deletes)}
}

// After is lease l (the zero Lease: none yet) as w leaves it, its Keys
// in order; the zero Lease when w drops it. It costs what l holds: the
// store changes its own leases in place instead (editLocked).
func (l Lease) After(w Write) Lease {
	if w.Drop {
		return Lease{}
	}
	keys := slices.Clone(l.Keys)
	slices.Sort(keys)
	if l.Door == "" && l.ID == "" {
		l = Lease{Door: w.Lease.Door, ID: w.Lease.ID}
	}
	l.Deadline, l.Renewed, l.Prefixes = w.Lease.Deadline, w.Lease.Renewed, w.Lease.Prefixes
	if w.Lease.State != nil {
		l.State = w.Lease.State
	}
	if len(w.Deletes) > 0 {
		gone := make(map[string]bool, len(w.Deletes))
		for _, k := range w.Deletes {
			gone[k] = true
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return gone[k] })
	}
	for _, r := range w.Puts {
		if k := r.Key(); k != "" && !underPrefix(l.Prefixes, k) {
			if i, found := slices.BinarySearch(keys, k); !found {
				keys = slices.Insert(keys, i, k)
			}
		}
	}
	l.Keys = keys
	return l
}
