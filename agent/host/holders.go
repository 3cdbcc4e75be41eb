package host

import (
	"slices"

	"github.com/namecast/namecast/routes"
)

// A record on an agent may be held by more than one holder: a RocketMQ
// connection, an HTTP registration with its TTL, a ZooKeeper session, a
// lease restored at start. Each holder is a lease (package lease), and a
// door drops its holder's lease before it withdraws what the lease
// covered. A record is withdrawn from this agent only when its last
// holder lets go: a withdrawal through one door leaves the records a
// lease of another door still covers (a URL created over ZooKeeper and
// registered over HTTP with a TTL outlives the session until the TTL runs
// out).

// For is the Host given to the door named door (its leases' Door): the
// same host, whose Apply keeps what another door's lease still holds.
func (h *Local) For(door string) Host { return &doorHost{Local: h, door: door} }

type doorHost struct {
	*Local
	door string
}

// Apply changes this agent's own records as Local.Apply does, except that
// a delete of a record another door still holds is left out: ok is then
// true, as the door's own hold is gone. When the table held this door's
// content of it, the content the other holders last wrote is put back
// (shared.go). The check and the change are one step under the host's
// lock: a door holds a record by saving its lease, then applying it, so
// a delete that found no other lease is applied before that door's put,
// never after it.
func (d *doorHost) Apply(puts []routes.Record, deletes []string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.applyAsLocked(d.door, puts, deletes, nil)
}

// applyAsLocked is the Apply of the door named door (doorHost.Apply);
// keys, when not nil, are strings of put keys the table keeps instead of
// its own copy (applyLocked). h.mu must be held.
func (h *Local) applyAsLocked(door string, puts []routes.Record, deletes []string, keys map[string]string) (bool, error) {
	kept := 0
	var restore []routes.Record
	var reverted []string // keys whose content went back to another holder's
	if len(deletes) > 0 {
		own := deletes[:0:0]
		for _, k := range deletes {
			others, holds := othersOf(h.doorsLocked(k), door)
			if len(others) == 0 {
				delete(h.shared, k)
				own = append(own, k)
				continue
			}
			kept++
			switch put, del := h.keptDeleteLocked(door, k, others, holds); {
			case put != nil:
				restore = append(restore, *put)
				reverted = append(reverted, k)
			case del:
				own = append(own, k)
				reverted = append(reverted, k)
			}
		}
		deletes = own
	}
	written := h.sharedPutsLocked(door, puts)
	all := puts
	if len(restore) > 0 {
		all = append(slices.Clip(puts), restore...)
	}
	ok, err := h.applyLocked(all, deletes, keys)
	if err != nil {
		return false, err // past the budget: nothing changed in the table
	}
	h.notePutsLocked(door, written)
	if len(reverted) > 0 {
		h.leases.Resave(reverted)
	}
	return ok || kept > 0, nil
}
