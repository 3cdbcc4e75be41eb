package lease

import (
	"encoding/json"
	"fmt"

	"github.com/namecast/namecast/routes"
)

// Change is one lease's part of a change several leases make together
// (HoldAll): the lease with the records it will cover, or its removal.
type Change struct {
	Lease Lease
	Recs  []routes.Record // what Lease covers once applied (not for Drop)
	Drop  bool            // the lease goes (Lease names it)
}

// HoldAll is Hold and Drop of several leases as one change: one log
// entry, written whole or not at all, so a door that changes the records
// of several clients at once (a ZooKeeper multi deleting ephemeral nodes
// of several sessions) never leaves the files holding part of it. An
// error means nothing was written and nothing changed; otherwise the door
// applies the change, lets go of its lock, and waits for the Saving.
func (ls *Store) HoldAll(cs []Change) (Saving, error) {
	if len(cs) == 1 {
		if cs[0].Drop {
			return ls.Drop(cs[0].Lease.Door, cs[0].Lease.ID)
		}
		return ls.Hold(cs[0].Lease, cs[0].Recs)
	}
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	return ls.holdAllLocked(cs)
}

// holdAllLocked is HoldAll of more or less than one change. saveMu held.
func (ls *Store) holdAllLocked(cs []Change) (Saving, error) {
	ls.mu.Lock()
	stop := ls.dir == "" || ls.frozen || ls.log == nil
	ls.mu.Unlock()
	if stop {
		ls.applyAll(cs, nil, 0, 0)
		return Saving{}, nil
	}
	type put struct {
		recs json.RawMessage
		hash uint64
	}
	puts := make([]put, len(cs))
	var e logEntry
	var others []otherHold
	for i, c := range cs {
		k := leaseKey(c.Lease.Door, c.Lease.ID)
		if c.Drop {
			ls.mu.Lock()
			_, inFile := ls.saved[k]
			ls.mu.Unlock()
			if inFile {
				e.Drops = append(e.Drops, leaseRef{Door: c.Lease.Door, ID: c.Lease.ID})
			}
			continue
		}
		b, err := json.Marshal(c.Recs)
		if err != nil {
			return Saving{}, err
		}
		body, err := json.Marshal(leaseBody{Lease: c.Lease, Records: b})
		if err != nil {
			return Saving{}, err
		}
		puts[i] = put{recs: b, hash: hashBytes(b)}
		if e.Put == nil {
			e.Put = body
		} else {
			e.Also = append(e.Also, body)
		}
		o, err := ls.othersHolding(k, c.Recs)
		if err != nil {
			return Saving{}, err
		}
		others = append(others, o...)
	}
	for _, o := range others {
		e.Also = append(e.Also, o.body)
	}
	if e.Put == nil && len(e.Drops) == 0 {
		ls.applyAll(cs, nil, 0, 0)
		return ls.inFlight(), nil
	}
	seq := ls.localSeq()
	wseq, err := ls.appendLeaseEntry(e)
	if err != nil {
		return Saving{}, err
	}
	keys := ls.applyAll(cs, func(i int) (json.RawMessage, uint64) { return puts[i].recs, puts[i].hash }, seq, wseq)
	keys = append(keys, ls.markOthers(others, seq, wseq)...)
	ls.compactIfLarge()
	return Saving{ls: ls, keys: keys, seq: wseq}, nil
}

// applyAll records cs in memory as written by entry wseq (0: not
// written, no data dir), the records of put i being recs(i), and returns
// the keys of the leases put. saveMu held.
func (ls *Store) applyAll(cs []Change, recs func(int) (json.RawMessage, uint64), seq, wseq uint64) []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var keys []string
	for i, c := range cs {
		k := leaseKey(c.Lease.Door, c.Lease.ID)
		if c.Drop {
			ls.forgetLocked(k)
			delete(ls.saved, k)
			continue
		}
		ls.setLocked(k, c.Lease)
		delete(ls.dropLater, k)
		delete(ls.lazy, k)
		if wseq == 0 {
			continue
		}
		b, h := recs(i)
		ls.saved[k] = savedState{deadline: c.Lease.Deadline, seq: seq, hash: h, wseq: wseq}
		ls.pending[k] = pendingHold{seq: wseq, recs: b, hash: h}
		keys = append(keys, k)
	}
	return keys
}

// markOthers records the other leases an entry wseq wrote (othersHolding)
// and returns the keys of those whose Wait is this change's.
func (ls *Store) markOthers(others []otherHold, seq, wseq uint64) []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.markOthersLocked(nil, others, seq, wseq)
}

// markOthersLocked is markOthers with ls.mu held, appending to keys.
func (ls *Store) markOthersLocked(keys []string, others []otherHold, seq, wseq uint64) []string {
	for _, o := range others {
		ls.saved[o.k] = savedState{deadline: o.deadline, seq: seq, hash: o.hash, wseq: wseq}
		delete(ls.lazy, o.k)
		if p, held := ls.pending[o.k]; held {
			// Its own door has yet to apply and wait: its Wait settles it.
			ls.pending[o.k] = pendingHold{seq: p.seq, recs: o.recs, hash: o.hash}
			continue
		}
		ls.pending[o.k] = pendingHold{seq: wseq, recs: o.recs, hash: o.hash}
		keys = append(keys, o.k)
	}
	return keys
}

// Undo puts back, as HoldAll, the leases a HoldAll changed, when what the
// door was to do with it failed (a ZooKeeper multi whose rule delete was
// refused after its sessions' leases were written). It cannot be
// refused: the door has changed nothing, and must answer the error. When
// the write fails, the leases are put back in memory all the same, and
// the log refuses every entry until a snapshot of memory is written
// (the save loop tries every dropRetry, and any later write first), so
// the files never hold a later change on top of the half that was not
// undone; until then a kill -9 restores the change the door refused.
// The error says so (the door logs it); the leases are put back either
// way.
func (ls *Store) Undo(cs []Change) (Saving, error) {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	sv, err := ls.holdAllLocked(cs)
	if err == nil {
		return sv, nil
	}
	ls.applyAll(cs, nil, 0, 0)
	ls.mu.Lock()
	for _, c := range cs {
		if !c.Drop {
			// Not as written: the snapshot writes it, with its records
			// from the table, where the refused change never was.
			k := leaseKey(c.Lease.Door, c.Lease.ID)
			delete(ls.saved, k)
			delete(ls.pending, k)
		}
	}
	ls.mu.Unlock()
	ls.log.Poison(fmt.Errorf("the lease log holds a change that was refused and could not be undone (%v)", err))
	ls.kick()
	return Saving{}, fmt.Errorf("putting back the leases of a refused change failed, so the data dir holds the refused change; no lease is saved until a snapshot of what is held is written: %w", err)
}

// resync writes a snapshot when the log refuses entries (a failed fsync,
// a failed Undo), and reports whether it takes entries now.
func (ls *Store) resync() bool {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	if ls.frozen || ls.log == nil || ls.log.Err() == nil {
		return true
	}
	return ls.compactLeases() == nil
}
