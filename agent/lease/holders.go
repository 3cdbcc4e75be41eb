package lease

import "slices"

// HeldByOtherDoor reports whether a lease of a door other than door covers
// key: another holder (an HTTP registration, a ZooKeeper session, a
// RocketMQ connection) still holds the record, so door letting go of it
// must not withdraw it. Leases are kept in memory with or without a data
// dir, so this holds without one too. It looks the key up in the index of
// what each lease names (setLocked), not through every lease.
func (ls *Store) HeldByOtherDoor(key, door string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ks := map[string]bool{}
	ls.holdersLocked(key, ks)
	for k := range ks {
		if l := ls.m[k]; l.Door != door && l.Covers(key) {
			return true
		}
	}
	return false
}

// DoorsHolding appends to buf, once each, the doors whose leases cover
// key, and returns it.
func (ls *Store) DoorsHolding(key string, buf []string) []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	add := func(ks map[string]bool) {
		for k := range ks {
			if l := ls.m[k]; l.Covers(key) && !slices.Contains(buf, l.Door) {
				buf = append(buf, l.Door)
			}
		}
	}
	add(ls.held[key])
	for i := 0; i < len(key)-1; i++ {
		if key[i] == '/' {
			add(ls.held[key[:i+1]])
		}
	}
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
			if ls.m[k].Covers(key) {
				ls.lazy[k] = true
				n++
			}
		}
	}
	ls.mu.Unlock()
	if n > 0 {
		ls.kick()
	}
}
