package lease

import "slices"

// The store keeps each lease's Keys in no order, and an index of which
// leases name which keys and prefixes, so that a write naming one key of
// a lease covering thousands (a ZooKeeper session's ephemeral znodes)
// costs a few look-ups, not a pass over the lease:
//
//   - held maps a key to the leases naming it, each with the key's place
//     in that lease's Keys: a key leaves a lease by moving its last key
//     into its place.
//   - pre maps each entry of a lease's Prefixes to the leases naming it.
//
// A lease's Keys in m belong to the store and change in place: what
// leaves ls.mu is a copy (leaseLocked), in key order.

// setLocked sets lease k to l in memory (the zero Lease: removes it),
// its Keys copied and indexed. ls.mu held.
func (ls *Store) setLocked(k string, l Lease) {
	if old, ok := ls.m[k]; ok {
		for _, c := range old.Keys {
			ls.unindexKey(c, k)
		}
		ls.unindexPrefixes(k, old.Prefixes)
	}
	if l.Door == "" && l.ID == "" {
		delete(ls.m, k)
		return
	}
	keys := make([]string, 0, len(l.Keys))
	for _, c := range l.Keys {
		if _, dup := ls.held[c][k]; dup {
			continue
		}
		ls.indexKey(c, k, len(keys))
		keys = append(keys, c)
	}
	l.Keys = keys
	ls.indexPrefixes(k, l.Prefixes)
	ls.m[k] = l
}

// editLocked changes lease k as a Write names it: meta's Deadline,
// Renewed and Prefixes, its State unless nil, the keys add joins to its
// Keys (unless one of its prefixes covers them already) and those of
// remove it leaves. It costs what it names, whatever the lease holds.
// ls.mu held.
func (ls *Store) editLocked(k string, meta Lease, add, remove []string) {
	l, had := ls.m[k]
	if !had {
		l = Lease{Door: meta.Door, ID: meta.ID}
	}
	l.Deadline, l.Renewed = meta.Deadline, meta.Renewed
	if meta.State != nil {
		l.State = meta.State
	}
	if !slices.Equal(l.Prefixes, meta.Prefixes) {
		ls.unindexPrefixes(k, l.Prefixes)
		l.Prefixes = slices.Clone(meta.Prefixes)
		ls.indexPrefixes(k, l.Prefixes)
	}
	for _, c := range remove {
		i, ok := ls.held[c][k]
		if !ok {
			continue
		}
		ls.unindexKey(c, k)
		last := len(l.Keys) - 1
		if i != last {
			moved := l.Keys[last]
			l.Keys[i] = moved
			ls.held[moved][k] = i
		}
		l.Keys[last] = ""
		l.Keys = l.Keys[:last]
	}
	for _, c := range add {
		if _, ok := ls.held[c][k]; ok || underPrefix(l.Prefixes, c) {
			continue
		}
		ls.indexKey(c, k, len(l.Keys))
		l.Keys = append(l.Keys, c)
	}
	ls.m[k] = l
}

// underPrefix reports whether one of prefixes covers key.
func underPrefix(prefixes []string, key string) bool {
	for _, p := range prefixes {
		if key == p || isPrefix(p) && len(key) > len(p) && key[:len(p)] == p {
			return true
		}
	}
	return false
}

func (ls *Store) indexKey(c, k string, i int) {
	ks := ls.held[c]
	if ks == nil {
		ks = map[string]int{}
		ls.held[c] = ks
	}
	ks[k] = i
}

func (ls *Store) unindexKey(c, k string) {
	if ks := ls.held[c]; ks != nil {
		delete(ks, k)
		if len(ks) == 0 {
			delete(ls.held, c)
		}
	}
}

func (ls *Store) indexPrefixes(k string, prefixes []string) {
	for _, p := range prefixes {
		ks := ls.pre[p]
		if ks == nil {
			ks = map[string]struct{}{}
			ls.pre[p] = ks
		}
		ks[k] = struct{}{}
	}
}

func (ls *Store) unindexPrefixes(k string, prefixes []string) {
	for _, p := range prefixes {
		if ks := ls.pre[p]; ks != nil {
			delete(ks, k)
			if len(ks) == 0 {
				delete(ls.pre, p)
			}
		}
	}
}

// holdersLocked adds to out the leases covering key: naming it, or a
// prefix of it (each ends with '/'). ls.mu held.
func (ls *Store) holdersLocked(key string, out map[string]bool) {
	ls.eachHolderLocked(key, func(k string) { out[k] = true })
}

// eachHolderLocked calls fn with each lease covering key, maybe more than
// once. ls.mu held.
func (ls *Store) eachHolderLocked(key string, fn func(k string)) {
	for k := range ls.held[key] {
		fn(k)
	}
	for k := range ls.pre[key] { // an entry without '/' covers only itself
		fn(k)
	}
	for i := 0; i < len(key)-1; i++ {
		if key[i] == '/' {
			for k := range ls.pre[key[:i+1]] {
				fn(k)
			}
		}
	}
}

// leaseLocked is lease k as a copy the caller may keep, its Keys in
// order. ls.mu held.
func (ls *Store) leaseLocked(k string) (Lease, bool) {
	l, ok := ls.m[k]
	if ok {
		l.Keys = slices.Clone(l.Keys)
		slices.Sort(l.Keys)
	}
	return l, ok
}

// sameCoverLocked reports whether lease k covers exactly l's keys and
// prefixes. ls.mu held.
func (ls *Store) sameCoverLocked(k string, l Lease) bool {
	old, ok := ls.m[k]
	if !ok || !slices.Equal(old.Prefixes, l.Prefixes) {
		return false
	}
	n := 0
	for i, c := range l.Keys {
		if _, ok := ls.held[c][k]; !ok {
			return false
		}
		if i == 0 || l.Keys[i-1] != c { // a door's Keys are in order
			n++
		}
	}
	return n == len(old.Keys)
}

// sameButDeadlineLocked reports whether lease k, covering what l covers,
// is l but for its deadline. ls.mu held.
func (ls *Store) sameButDeadlineLocked(k string, l Lease) bool {
	old := ls.m[k]
	return old.Door == l.Door && old.ID == l.ID && string(old.State) == string(l.State)
}
