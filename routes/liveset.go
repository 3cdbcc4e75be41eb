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
// Beside each pointer the set keeps 32 bits of its key's hash (4 bytes a
// slot, ~8 a record): a probe compares hashes in one array and reads an
// entry's key only when they match, and a resize moves pointers by their
// stored hash without reading any entry. Without them a joiner's merge of
// 100,100 records spent ~45% of its time in the set: a new key's probe
// at up to 3/4 full reads several entries' keys (a cache miss each) and
// compares their bytes (all keys of a table are about as long), and each
// doubling rehashed every key.
//
// Open addressing with linear probing, at most 3/4 full; a delete shifts
// the entries after it back (no tombstones to collect). Not safe for
// concurrent use (the table's lock guards it), and not to be changed while
// all's iterator runs.
type liveSet struct {
	slots  []*entry // len is 0 or a power of two
	hashes []uint32 // hashes[i] is the hash of slots[i].key, if slots[i] != nil
	n      int
}

var liveSeed = maphash.MakeSeed()

func (s *liveSet) len() int { return s.n }

// hashKey is the hash the set keeps of key. A slot's home is its low bits,
// so tables of up to 2^32 slots find their entries by it alone.
func hashKey(key string) uint32 { return uint32(maphash.String(liveSeed, key)) }

// find is the slot of key (of hash h), or the empty slot where the probe
// for it ended; the table must not be empty.
func (s *liveSet) find(key string, h uint32) (int, bool) {
	mask := uint32(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.slots[i]
		if e == nil {
			return int(i), false
		}
		if s.hashes[i] == h && e.key == key {
			return int(i), true
		}
	}
}

// get returns the entry of key.
func (s *liveSet) get(key string) (*entry, bool) {
	if s.n == 0 {
		return nil, false
	}
	i, ok := s.find(key, hashKey(key))
	if !ok {
		return nil, false
	}
	return s.slots[i], true
}

// put adds e, or replaces the entry of the same key.
func (s *liveSet) put(e *entry) {
	if (s.n+1)*4 > len(s.slots)*3 {
		s.resize(max(8, len(s.slots)*2))
	}
	h := hashKey(e.key)
	i, ok := s.find(e.key, h)
	if !ok {
		s.n++
	}
	s.slots[i], s.hashes[i] = e, h
}

// del removes the entry of key, if any. The entries after it in its run
// move back so that every entry stays reachable from its home slot, and a
// set that has shrunk to an eighth of its table moves to a smaller one.
func (s *liveSet) del(key string) {
	if s.n == 0 {
		return
	}
	i, ok := s.find(key, hashKey(key))
	if !ok {
		return
	}
	mask := len(s.slots) - 1
	s.slots[i] = nil
	s.n--
	// Knuth's algorithm R: an entry at j may fill the hole at i unless its
	// home lies cyclically in (i, j].
	for j := (i + 1) & mask; s.slots[j] != nil; j = (j + 1) & mask {
		h := int(s.hashes[j]) & mask
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			s.slots[i], s.slots[j] = s.slots[j], nil
			s.hashes[i] = s.hashes[j]
			i = j
		}
	}
	switch {
	case s.n == 0:
		s.slots, s.hashes = nil, nil
	case len(s.slots) > 8 && s.n*8 < len(s.slots):
		s.resize(len(s.slots) / 2)
	}
}

func (s *liveSet) resize(size int) {
	old, oldHashes := s.slots, s.hashes
	s.slots, s.hashes = make([]*entry, size), make([]uint32, size)
	mask := uint32(size - 1)
	for j, e := range old {
		if e == nil {
			continue
		}
		h := oldHashes[j]
		i := h & mask
		for s.slots[i] != nil {
			i = (i + 1) & mask
		}
		s.slots[i], s.hashes[i] = e, h
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
