package host

import (
	"slices"

	"github.com/namecast/namecast/routes"
)

// A record two doors hold (one broker registered over RocketMQ and over
// HTTP) is one record of this agent: the table holds the content of the
// door that wrote it last. So that the content served when one of them
// lets go is what the remaining holders last registered, and not the
// content of the door that let go, the host remembers, for each record
// held by more than one door, what each holder last wrote (its put as the
// table stamped it, or nothing) and whose content the table holds (its
// author):
//
//   - A put by a door of a record another door holds makes the putting
//     door its author. The first time, every other holder is taken to
//     have registered what the table held (nothing, when it held none).
//   - A delete by a door of a record another door still holds is left
//     out (holders.go), and when the deleting door was the author, the
//     content of the holder that wrote last is put back, with the stamp
//     it had (so it is served as the registration it was, newest or
//     not, routes' recency); a holder that wrote nothing there has it
//     deleted. A door that still holds the record (its registration left
//     it out) is remembered as having written nothing.
//   - Memory is kept only for records held by more than one door: a
//     record's entry goes once a single holder is left.
//
// All of it runs under the host's lock, with the change it guards.

// shared is what each holder of one record last wrote.
type shared struct {
	author string
	by     map[string]wrote
}

// wrote is one door's last write of a record: rec nil for none. seq
// orders the writes of the record's holders.
type wrote struct {
	rec *routes.Record
	seq uint64
}

// doorsLocked is the doors holding key. h.mu must be held.
func (h *Local) doorsLocked(key string) []string {
	h.doorBuf = h.leases.DoorsHolding(key, h.doorBuf[:0])
	return h.doorBuf
}

// othersOf is doors without door.
func othersOf(doors []string, door string) (others []string, holds bool) {
	for _, d := range doors {
		if d == door {
			holds = true
		} else {
			others = append(others, d)
		}
	}
	return others, holds
}

// sharedLocked is key's entry, made with every other holder taken to
// have written what the table holds when there was none. h.mu must be
// held.
func (h *Local) sharedLocked(key string, others []string) *shared {
	sh := h.shared[key]
	if sh == nil {
		sh = &shared{by: map[string]wrote{}}
		if len(others) > 0 {
			sh.author = others[0]
		}
		if h.shared == nil {
			h.shared = map[string]*shared{}
		}
		h.shared[key] = sh
	}
	var cur *routes.Record
	if r, ok := h.table.LocalRecord(key); ok {
		cur = &r
	}
	for _, o := range others {
		if _, known := sh.by[o]; !known {
			sh.by[o] = wrote{rec: cur}
		}
	}
	return sh
}

// sharedPutsLocked returns the keys of door's puts that another door
// holds too, their entries made (before the puts are applied, so that
// a first entry takes the other holders' content from the table); the
// entries of keys door alone holds go. h.mu must be held.
func (h *Local) sharedPutsLocked(door string, puts []routes.Record) []string {
	var keys []string
	for _, r := range puts {
		key := r.Key()
		others, _ := othersOf(h.doorsLocked(key), door)
		if len(others) == 0 {
			delete(h.shared, key)
			continue
		}
		h.sharedLocked(key, others)
		keys = append(keys, key)
	}
	return keys
}

// notePutsLocked makes door the author of keys (from sharedPutsLocked),
// with the records as the table now holds them (after applyLocked).
// h.mu must be held.
func (h *Local) notePutsLocked(door string, keys []string) {
	for _, key := range keys {
		sh := h.shared[key]
		if sh == nil {
			continue
		}
		var now *routes.Record
		if got, ok := h.table.LocalRecord(key); ok {
			now = &got
		}
		h.writeSeq++
		sh.by[door] = wrote{rec: now, seq: h.writeSeq}
		sh.author = door
	}
}

// keptDeleteLocked is door's delete of key, which another door still
// holds (others): it returns the put that restores the content of the
// holder that wrote last, or the delete when that holder wrote nothing;
// neither when door's content is not the one the table holds. h.mu must
// be held.
func (h *Local) keptDeleteLocked(door, key string, others []string, holds bool) (put *routes.Record, del bool) {
	sh := h.sharedLocked(key, others)
	if holds {
		h.writeSeq++
		sh.by[door] = wrote{seq: h.writeSeq}
	} else {
		delete(sh.by, door)
	}
	for d := range sh.by { // holders that let go without a delete here
		if d != door && !slices.Contains(others, d) {
			delete(sh.by, d)
		}
	}
	if sh.author == door {
		var last string
		var best wrote
		for d, w := range sh.by {
			if d != door && (last == "" || w.seq > best.seq || w.seq == best.seq && d < last) {
				last, best = d, w
			}
		}
		sh.author = last
		if best.rec != nil {
			put = best.rec
		} else {
			del = true
		}
	}
	if len(sh.by) <= 1 {
		delete(h.shared, key)
	}
	return put, del
}
