package host

import (
	"errors"
	"slices"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// Write is how a door changes records its clients hold: one call for the
// whole of a change, naming only what changes (lease.Write), in the
// order every holder of a record needs:
//
//  1. the budget is checked (budget.go) with what the change puts and
//     what it deletes that no other lease holds counted as freed, so a
//     swap of records at the very limit goes through;
//  2. each lease is saved with its change (lease.Store.Write): an error
//     means nothing was written;
//  3. the records are applied as the lease's door applies them: a
//     delete of a record another lease still holds is kept (of another
//     door: holders.go; of the same door: left out);
//  4. unlock is called (nil: none): the door notes what it changed and
//     lets go of its own lock, which it held from before the write;
//  5. Write waits until the change is on disk, sharing the fsync with
//     the writers waiting at once (lease.Saving).
//
// Steps 1 to 3 are one step under the host's lock, so the check is the
// write's own. An error from 1 or 2 (routes.ErrBudget: past the budget;
// otherwise the data dir refused it) means nothing changed, and unlock
// was not called: the door still holds its lock, and answers the error.
// One from 5 (errors.Is ErrUnsaved) means the change is made but not on
// disk, and must not be acknowledged.
func (h *Local) Write(unlock func(), ws ...lease.Write) error {
	sv, err := h.write(ws)
	if err != nil {
		return err
	}
	if unlock != nil {
		unlock()
	}
	if err := sv.Wait(); err != nil {
		return unsavedError{err}
	}
	return nil
}

// ErrUnsaved is what errors.Is finds in Write's error when the change
// was made, but is not on disk: the door must not acknowledge it, and
// its own state follows the change (lease.Saving says why it stays).
var ErrUnsaved = errors.New("the change is made but not on disk")

type unsavedError struct{ err error }

func (e unsavedError) Error() string        { return e.err.Error() }
func (e unsavedError) Unwrap() error        { return e.err }
func (e unsavedError) Is(target error) bool { return target == ErrUnsaved }

// write is steps 1 to 3 of Write.
func (h *Local) write(ws []lease.Write) (lease.Saving, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.checkLocked(ws); err != nil {
		return lease.Saving{}, err
	}
	var keys map[string]string
	for _, w := range ws {
		if len(w.Puts) > 0 && keys == nil {
			keys = map[string]string{}
		}
	}
	sv, err := h.leases.Write(ws, keys)
	if err != nil {
		return lease.Saving{}, err
	}
	for _, w := range ws {
		deletes := w.Deletes
		if len(deletes) > 0 {
			deletes = slices.DeleteFunc(slices.Clone(deletes), func(k string) bool {
				_, byDoor := h.leases.HeldElsewhere(k, w.Lease.Door, w.Lease.ID)
				return byDoor
			})
		}
		if len(w.Puts) == 0 && len(deletes) == 0 {
			continue
		}
		if _, err := h.applyAsLocked(w.Lease.Door, w.Puts, deletes, keys); err != nil {
			// Only content put back for another holder can grow past
			// the check (shared.go); the lease stays as saved, and its
			// door's next write of it saves it again.
			return lease.Saving{}, err
		}
	}
	return sv, nil
}

// checkLocked is step 1 of Write. h.mu held.
func (h *Local) checkLocked(ws []lease.Write) error {
	if h.cfg.Budget == (routes.Budget{}) {
		return nil
	}
	var puts []routes.Record
	var freed []string
	for _, w := range ws {
		puts = append(puts, w.Puts...)
		for _, k := range w.Deletes {
			if held, _ := h.leases.HeldElsewhere(k, w.Lease.Door, w.Lease.ID); !held {
				freed = append(freed, k)
			}
		}
	}
	if len(puts) == 0 {
		return nil
	}
	pending, _ := h.budget.settle(nil, nil)
	if _, _, err := h.table.CheckLocal(puts, freed, h.cfg.Budget, pending); err != nil {
		h.refused(err)
		return err
	}
	return nil
}
