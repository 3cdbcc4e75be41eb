package routes

// Restarts without a gap. A restarted agent republishes, under its new
// incarnation, the records it carried (agent/lease). A replica that learns
// of the new incarnation (a member tag, an op or a snapshot of it) does not
// drop the old one's records: it retires them. A retired record stays in
// the views until the new incarnation writes its key (put or delete), or
// the origin's own snapshot of the new incarnation arrives, which settles
// every key it covers; dropping the origin ends them too. Until then the
// replica's digest shows a marked hash, so anti-entropy (which pulls from
// the origin itself when hashes differ at the same point) fetches that
// snapshot even when the new incarnation holds nothing.

// retiredMark is XORed into the digest hash of an origin holding retired
// records.
const retiredMark = 0x5eed_0f_01d_1ca7e

// retire starts incarnation inc of origin; the older one's live records
// join its retired ones, still linked in the views.
func (t *Table) retire(origin string, st *originState, inc uint64) *originState {
	next := newOriginState(origin, inc)
	next.retired = st.retired
	st.retired, st.prev = nil, nil
	next.prev = st // read only from now on (remember.go)
	if next.retired == nil && st.live.len() > 0 {
		next.retired = make(map[string]*entry, st.live.len())
	}
	for k, e := range st.live.all() {
		if old, ok := next.retired[k]; ok {
			t.views.unlink(old)
		}
		next.retired[k] = e
	}
	t.origins[origin] = next
	return next
}

// unretire ends the retired record of key, if any.
func (t *Table) unretire(st *originState, key string) {
	old, ok := st.retired[key]
	if !ok {
		return
	}
	t.views.unlink(old)
	delete(st.retired, key)
	if len(st.retired) == 0 {
		st.retired = nil
	}
	t.changed(key)
	t.watch.bump()
}

// digestHash is the hash a digest shows: marked while retired records are
// served, so that it differs from the origin's own.
func (st *originState) digestHash() uint64 {
	if len(st.retired) > 0 {
		return st.hash ^ retiredMark
	}
	return st.hash
}
