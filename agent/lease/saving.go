package lease

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/namecast/namecast/routes"
)

// A door changes a client's records under its own lock, and tells the
// client only once the change is on disk. Waiting for the fsync under
// that lock would make every writer of the door wait for the one before
// it (16 RocketMQ writers at once: p50 23 ms, where one fsync costs
// 0.3-1 ms). So a change is saved in two steps, group commit:
//
//	sv, err := holder.Hold(l, recs) // under the door's lock: written, not synced
//	if err != nil {
//		// refused: apply nothing, answer err
//	}
//	apply(recs)                     // still under the lock
//	unlock()
//	if err := sv.Wait(); err != nil { // synced: writers waiting at once share one fsync
//		// answer err: not acknowledged
//	}
//	// answer success
//
// Drop does the same for a withdrawal. What Wait covers is in the log in
// the order the door's lock gave, so the disk never holds a later change
// without an earlier one.
//
// Between the two steps, readers see the change before it is on disk: a
// crash then loses it, but nobody was told it was made. A failed write
// (a full disk) is reported by Hold or Drop, before anything changed. A
// failed fsync is reported by Wait, after the door applied the change:
// Wait first writes a fresh snapshot of every lease (what the store
// does after any failed fsync, since the kernel may have dropped the
// dirty pages), and if that works the change is on disk after all; only
// when the snapshot fails too does Wait report an error, and then the
// change stays made in memory, unacknowledged. Undoing it is no way out:
// the undo could not be saved either. The next write that succeeds
// writes a snapshot first, so memory and disk agree again.

// dropRetry is how often the save loop tries again to save a removal the
// disk refused (Forget).
const dropRetry = time.Second

// pendingHold is what Hold wrote of a lease whose records the door may
// not have applied yet.
type pendingHold struct {
	seq  uint64          // Hold's log entry
	recs json.RawMessage // the records held (nil for an edit)
	hash uint64
	// edit is what a Write saved as an edit (edit.go), when it did: the
	// lease's records are the table's with its puts and deletes applied.
	edit *Write
}

// Saving is a lease change written to the log and perhaps not yet on
// disk (Hold, Drop, Forget); Wait returns once it is. The zero Saving has
// nothing to wait for.
type Saving struct {
	ls *Store
	// keys are Hold's leases (its own, and those it wrote with it): Wait
	// saves the records the door applied, where they differ.
	keys []string
	seq  uint64 // the log entry to wait for
}

// Wait returns once the change is on disk; an error means it is not, and
// the door must not acknowledge it (see the comment at the top of this
// file). Call it after applying the change and after letting go of the
// door's own lock, and once.
func (sv Saving) Wait() error {
	ls := sv.ls
	if ls == nil {
		return nil
	}
	seq := sv.seq
	for _, k := range sv.keys {
		seq = max(seq, ls.settle(k, sv.seq))
	}
	if seq == 0 {
		return nil // nothing written
	}
	if err := ls.log.Wait(seq); err == nil {
		return nil
	}
	ls.saveMu.Lock()
	if !ls.frozen && ls.log.Err() != nil {
		_ = ls.compactLeases() // logged; the wait below reports it
	}
	ls.saveMu.Unlock()
	return ls.log.Wait(seq) // on disk if the snapshot holds it
}

// settle ends Hold seq's pending state of lease k, now that the door has
// applied it, and writes the lease's records as the table holds them
// when they differ from what Hold wrote (the table stamps a broker put),
// returning that entry's seq (0: none). A later Hold of the same lease
// is left pending.
func (ls *Store) settle(k string, seq uint64) uint64 {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	p := ls.pending[k]
	mine := p.seq == seq
	if mine {
		delete(ls.pending, k)
	}
	ls.mu.Unlock()
	if !mine {
		return 0
	}
	if p.edit != nil {
		return ls.settleEdit(k, p.edit)
	}
	_, wseq, err := ls.writeLeaseLocked(k, false)
	if err != nil {
		// What Hold wrote restores the same records, unstamped.
		ls.logger.Warn("saving a lease's records as applied failed; the records as held are saved", "err", err)
		return 0
	}
	return wseq
}

// inFlight is a Saving for every entry written so far: a change that
// needs no entry of its own may depend on one not yet synced (the same
// change, made a moment before by another writer).
func (ls *Store) inFlight() Saving {
	if ls.log == nil {
		return Saving{}
	}
	return Saving{ls: ls, seq: ls.log.Last()}
}

// Hold is PutLease for a change the door has not applied yet: it writes
// lease l with recs, the records l will cover once applied, before the
// door applies them; on an error the door applies nothing and answers
// the error, so a change that cannot be saved changes nothing anywhere.
// Otherwise the door applies recs, lets go of its lock, and waits for
// the returned Saving before it answers (see the top of this file). A
// lease already saved with the same cover and records is only
// refreshed, as PutLease does.
func (ls *Store) Hold(l Lease, recs []routes.Record) (Saving, error) {
	k := leaseKey(l.Door, l.ID)
	ls.mu.Lock()
	_, had := ls.m[k]
	sameCover := had && ls.sameCoverLocked(k, l)
	same := sameCover && ls.sameButDeadlineLocked(k, l)
	sv, inFile := ls.saved[k]
	stop := ls.dir == "" || ls.frozen
	ls.mu.Unlock()
	if stop {
		return Saving{}, ls.PutLease(l)
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return Saving{}, err
	}
	h := hashBytes(b)
	if inFile && sameCover && h == sv.hash {
		ls.mu.Lock()
		ls.setLocked(k, l)
		delete(ls.dropLater, k)
		ls.mu.Unlock()
		ls.refresh(k, same, l, sv)
		return Saving{ls: ls, seq: sv.wseq}, nil // the entry that wrote them may be on its way still
	}
	body, err := json.Marshal(leaseBody{Lease: l, Records: b})
	if err != nil {
		return Saving{}, err
	}
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	stop = ls.frozen || ls.log == nil
	ls.mu.Unlock()
	if stop {
		return Saving{}, ls.PutLease(l)
	}
	seq := ls.localSeq()
	others, err := ls.othersHolding(k, recs)
	if err != nil {
		return Saving{}, err
	}
	e := logEntry{Put: body}
	for _, o := range others {
		e.Also = append(e.Also, o.body)
	}
	wseq, err := ls.appendLeaseEntry(e)
	if err != nil {
		return Saving{}, err
	}
	keys := []string{k}
	ls.mu.Lock()
	ls.setLocked(k, l)
	ls.saved[k] = savedState{deadline: l.Deadline, seq: seq, hash: h, wseq: wseq}
	ls.pending[k] = pendingHold{seq: wseq, recs: b, hash: h}
	delete(ls.lazy, k)
	delete(ls.dropLater, k)
	keys = ls.markOthersLocked(keys, others, seq, wseq)
	ls.mu.Unlock()
	ls.compactIfLarge()
	return Saving{ls: ls, keys: keys, seq: wseq}, nil
}

// otherHold is a lease written with another's Hold, which changes a
// record it covers too.
type otherHold struct {
	k        string
	deadline time.Time
	body     json.RawMessage // its leaseBody
	recs     json.RawMessage
	hash     uint64
}

// othersHolding lists the leases other than k that cover a record of
// recs, with their records as they will be once recs are applied, where
// those differ from what the files hold: a record two holders share must
// come back from a crash as last acknowledged, whichever of them changed
// it last (a URL a ZooKeeper session created and an HTTP registration
// holds too), not as the one whose lease the restore happens to read
// last. Finding them costs a look-up per record and path separator
// (setLocked's index); only a shared record costs an encoding. saveMu
// held.
func (ls *Store) othersHolding(k string, recs []routes.Record) ([]otherHold, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	type cand struct {
		k       string
		l       Lease
		pending json.RawMessage
		edit    *Write
		saved   uint64
	}
	var cands []cand
	ls.mu.Lock()
	ks := map[string]bool{}
	for _, r := range recs {
		ls.holdersLocked(r.Key(), ks)
	}
	delete(ks, k)
	for ok := range ks {
		l, _ := ls.leaseLocked(ok)
		p := ls.pending[ok]
		cands = append(cands, cand{k: ok, l: l, pending: p.recs, edit: p.edit, saved: ls.saved[ok].hash})
	}
	ls.mu.Unlock()
	var out []otherHold
	for _, c := range cands {
		puts := recs
		if c.pending != nil {
			// Held, not applied yet: its records are what it held.
			var held []routes.Record
			if err := json.Unmarshal(c.pending, &held); err != nil {
				return nil, fmt.Errorf("cannot read the held records of lease %s/%s: %w", c.l.Door, c.l.ID, err)
			}
			puts = append(held, recs...)
		}
		var deletes []string
		if c.edit != nil {
			// Edited, not applied yet: its records are the table's with
			// the edit applied.
			puts = append(slices.Clone(c.edit.Puts), recs...)
			deletes = c.edit.Deletes
		}
		b, err := json.Marshal(c.l.RecordsAfter(ls.table, puts, deletes))
		if err != nil {
			return nil, fmt.Errorf("cannot encode the records of lease %s/%s: %w", c.l.Door, c.l.ID, err)
		}
		h := hashBytes(b)
		if h == c.saved {
			continue
		}
		body, err := json.Marshal(leaseBody{Lease: c.l, Records: b})
		if err != nil {
			return nil, err
		}
		out = append(out, otherHold{k: c.k, deadline: c.l.Deadline, body: body, recs: b, hash: h})
	}
	return out, nil
}

// Drop writes the removal of a lease before the door withdraws its
// records (step 2 of the package comment). An error means the removal
// could not be written: the lease is kept as it was, and the door must
// withdraw nothing (a restart would bring the records back after the
// client was told they were gone). Otherwise the door withdraws the
// records, lets go of its lock, and waits for the returned Saving before
// it acknowledges the withdrawal.
func (ls *Store) Drop(door, id string) (Saving, error) {
	k := leaseKey(door, id)
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	_, inFile := ls.saved[k]
	if !inFile || ls.frozen || ls.log == nil {
		ls.forgetLocked(k)
		ls.mu.Unlock()
		return ls.inFlight(), nil
	}
	ls.mu.Unlock()
	seq, err := ls.appendLeaseEntry(logEntry{Drop: &leaseRef{Door: door, ID: id}})
	if err != nil {
		return Saving{}, err
	}
	ls.mu.Lock()
	ls.forgetLocked(k)
	delete(ls.saved, k)
	ls.mu.Unlock()
	ls.compactIfLarge()
	return Saving{ls: ls, seq: seq}, nil
}

// forgetLocked forgets lease k in memory. ls.mu held.
func (ls *Store) forgetLocked(k string) {
	ls.setLocked(k, Lease{})
	delete(ls.lazy, k)
	delete(ls.pending, k)
	delete(ls.dropLater, k)
}

// DropLease is Drop, then Wait: for a door that withdraws without
// holding a lock other writers need meanwhile.
func (ls *Store) DropLease(door, id string) error {
	sv, err := ls.Drop(door, id)
	if err != nil {
		return err
	}
	return sv.Wait()
}

// Forget is Drop for a withdrawal nobody can refuse, because nobody is
// there to tell: the client let go (its connection closed, its session
// ended). The lease is forgotten at once and the door withdraws the
// records; when the disk refuses the removal, the save loop writes it
// once the disk takes writes again (or the next snapshot leaves the lease
// out). Until then a restart restores the lease as it restores any whose
// client went away: until its deadline, unless the client comes back and
// confirms it. A lease with no deadline would come back for good, so a
// door forgets only leases with one. Waiting for the Saving is optional:
// nobody is told.
func (ls *Store) Forget(door, id string) Saving {
	sv, err := ls.Drop(door, id)
	if err == nil {
		return sv
	}
	k := leaseKey(door, id)
	ls.mu.Lock()
	ls.forgetLocked(k)
	ls.dropLater[k] = leaseRef{Door: door, ID: id}
	ls.mu.Unlock()
	ls.logger.Warn("a withdrawal could not be saved to the data dir; it is withdrawn, and saved once the disk takes writes",
		"door", door, "id", id, "err", err)
	ls.kick()
	return Saving{}
}

// saveDropsLater writes the removals Forget could not, and reports
// whether none is left.
func (ls *Store) saveDropsLater() bool {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	refs := make([]leaseRef, 0, len(ls.dropLater))
	for _, r := range ls.dropLater {
		refs = append(refs, r)
	}
	ls.mu.Unlock()
	if len(refs) == 0 || ls.frozen || ls.log == nil {
		return true
	}
	var last uint64
	for _, r := range refs {
		k := leaseKey(r.Door, r.ID)
		ls.mu.Lock()
		_, back := ls.m[k] // held again: its own write says so
		_, inFile := ls.saved[k]
		_, still := ls.dropLater[k]
		ls.mu.Unlock()
		if back || !inFile || !still {
			ls.mu.Lock()
			delete(ls.dropLater, k)
			ls.mu.Unlock()
			continue
		}
		seq, err := ls.appendLeaseEntry(logEntry{Drop: &r})
		if err != nil {
			return false
		}
		last = seq
		ls.mu.Lock()
		delete(ls.saved, k)
		delete(ls.dropLater, k)
		ls.mu.Unlock()
		ls.compactIfLarge()
	}
	if last > 0 {
		ls.saveMu.Unlock()
		err := Saving{ls: ls, seq: last}.Wait()
		ls.saveMu.Lock()
		if err != nil {
			ls.logger.Error("saving withdrawals to the data dir failed", "err", err)
		}
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.dropLater) == 0
}
