package lease

import "slices"

// HeldElsewhere reports whether a lease other than door's lease id
// covers key, and whether one of them is door's.
func (ls *Store) HeldElsewhere(key, door, id string) (held, byDoor bool) {
	k := leaseKey(door, id)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.eachHolderLocked(key, func(h string) {
		if h != k {
			held = true
			byDoor = byDoor || ls.m[h].Door == door
		}
	})
	return held, byDoor
}

// DoorsHolding appends to buf, once each, the doors whose leases cover
// key, and returns it.
func (ls *Store) DoorsHolding(key string, buf []string) []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.eachHolderLocked(key, func(k string) {
		if d := ls.m[k].Door; !slices.Contains(buf, d) {
			buf = append(buf, d)
		}
	})
	return buf
}

// Resave has the save loop write, within leaseSaveDelay, every lease
// covering one of keys, whose records changed without a Hold: the host
// put back what a remaining holder last wrote when another door let go
// (package host). Until then, a restart restores them as the lease last
// wrote them, and so would the door's next renewal (PutLease) write them.
func (ls *Store) Resave(keys []string) {
	ls.mu.Lock()
	if ls.dir == "" || ls.frozen {
		ls.mu.Unlock()
		return
	}
	n := 0
	ks := map[string]bool{}
	for _, key := range keys {
		clear(ks)
		ls.holdersLocked(key, ks)
		for k := range ks {
			ls.lazy[k] = true
			n++
		}
	}
	ls.mu.Unlock()
	if n > 0 {
		ls.kick()
	}
}

// Uncovered lists the keys of this agent's records that the lease named
// by l covers now and l, as it will be, does not, and that no other
// lease covers: what writing l frees (package host counts it against
// the record budget in the same step as the check).
func (ls *Store) Uncovered(l Lease) []string {
	k := leaseKey(l.Door, l.ID)
	ls.mu.Lock()
	old, ok := ls.m[k]
	if !ok {
		ls.mu.Unlock()
		return nil
	}
	keys := slices.Clone(old.Keys)
	prefixes := slices.Clone(old.Prefixes)
	ls.mu.Unlock()
	for _, p := range prefixes {
		if !isPrefix(p) {
			keys = append(keys, p)
			continue
		}
		for _, r := range ls.table.LocalRecords(p) {
			keys = append(keys, r.Key())
		}
	}
	after := make(map[string]bool, len(l.Keys))
	for _, key := range l.Keys {
		after[key] = true
	}
	seen := map[string]bool{}
	var out []string
	ls.mu.Lock()
	for _, key := range keys {
		if after[key] || underPrefix(l.Prefixes, key) || seen[key] {
			continue
		}
		seen[key] = true
		other := false
		ls.eachHolderLocked(key, func(h string) { other = other || h != k })
		if !other {
			out = append(out, key)
		}
	}
	ls.mu.Unlock()
	return slices.DeleteFunc(out, func(key string) bool {
		_, held := ls.table.LocalRecord(key)
		return !held
	})
}
