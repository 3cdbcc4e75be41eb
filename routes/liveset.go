package routes

import (
	"hash/maphash"
	"iter"
)

// liveSet is an origin's live records by key. Every entry holds its own
// key, so the set is a table of entry pointers, 8 bytes a slot, where a Go
// map[string]*entry pays the key twice (16 more bytes a slot) and a
// map[string]entry a 40-byte slot; with the slack of a power-of-two table
// that is ~16 bytes a record instead of ~96, on 100,000 records per host.
//
// Open addressing with linear probing, at most 3/4 full; a delete shifts
// the entries after it back (no tombstones to collect). Not safe for
// concurrent use (the table's lock guards it), and not to be changed while
// all's iterator runs.
type liveSet struct {
	slots []*entry // len is 0 or a power of two
	n     int
}

var liveSeed = maphash.MakeSeed()

func (s *liveSet) len() int { return s.n }

// home is key's first slot; the table must not be empty.
func (s *liveSet) home(key string) int {
	return int(maphash.String(liveSeed, key) & uint64(len(s.slots)-1))
}

// get returns the entry of key.
func (s *liveSet) get(key string) (*entry, bool) {
	if s.n == 0 {
		return nil, false
	}
	mask := len(s.slots) - 1
	for i := s.home(key); ; i = (i + 1) & mask {
		e := s.slots[i]
		if e == nil {
			return nil, false
		}
		if e.key == key {
			return e, true
		}
	}
}

// put adds e, or replaces the entry of the same key.
func (s *liveSet) put(e *entry) {
	if (s.n+1)*4 > len(s.slots)*3 {
		s.resize(max(8, len(s.slots)*2))
	}
	mask := len(s.slots) - 1
	for i := s.home(e.key); ; i = (i + 1) & mask {
		if s.slots[i] == nil {
			s.slots[i] = e
			s.n++
			return
		}
		if s.slots[i].key == e.key {
			s.slots[i] = e
			return
		}
	}
}

// del removes the entry of key, if any. The entries after it in its run
// move back so that every entry stays reachable from its home slot, and a
// set that has shrunk to an eighth of its table moves to a smaller one.
func (s *liveSet) del(key string) {
	if s.n == 0 {
		return
	}
	mask := len(s.slots) - 1
	i := s.home(key)
	for ; ; i = (i + 1) & mask {
		if s.slots[i] == nil {
			return
		}
		if s.slots[i].key == key {
			break
		}
	}
	s.slots[i] = nil
	s.n--
	// Knuth's algorithm R: an entry at j may fill the hole at i unless its
	// home lies cyclically in (i, j].
	for j := (i + 1) & mask; s.slots[j] != nil; j = (j + 1) & mask {
		h := s.home(s.slots[j].key)
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			s.slots[i], s.slots[j] = s.slots[j], nil
			i = j
		}
	}
	switch {
	case s.n == 0:
		s.slots = nil
	case len(s.slots) > 8 && s.n*8 < len(s.slots):
		s.resize(len(s.slots) / 2)
	}
}

func (s *liveSet) resize(size int) {
	old := s.slots
	s.slots = make([]*entry, size)
	mask := size - 1
	for _, e := range old {
		if e == nil {
			continue
		}
		i := s.home(e.key)
		for s.slots[i] != nil {
			i = (i + 1) & mask
		}
		s.slots[i] = e
	}
}

// all yields every entry with its key, in no particular order. The set
// must not change until the loop ends: collect keys first to change them.
func (s *liveSet) all() iter.Seq2[string, *entry] {
	return func(yield func(string, *entry) bool) {
		for _, e := range s.slots {
			if e != nil && !yield(e.key, e) {
				return
			}
		}
	}
}
