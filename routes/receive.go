package routes

// A replica holds no more of another agent than the budget (SetBudget)
// its own doors are held to (budget.go): an origin whose records pass it
// (a faulty agent, or one given a larger budget) would otherwise fill
// every agent in the cluster. So the table refuses such an origin whole,
// the same way on every replica:
//
//  1. After an op or a snapshot of origin o is applied, if o's records
//     pass the budget, every record of o is dropped (from the views too)
//     and o is marked refused at its seq. The choice is all or none, not
//     which records to keep: ops reach replicas in different orders, and
//     "the first ones that fit" would differ between them, where "none"
//     is the same everywhere. A replica that saw the ops of o's state at
//     seq s decides what every replica decides on that state.
//  2. While refused, o's ops are ignored, and a snapshot of o is merged
//     only when it is newer than the refusal (a higher seq), or is o's
//     own (authoritative) at the same seq after a refusal that ops alone
//     decided: ops that arrived out of order can add up past the budget
//     where o's state at that seq does not, and o's own snapshot settles
//     it. The merge starts from nothing, so a refusal decided by o's own
//     snapshot is the truth about o at that seq.
//  3. The gossip layer leaves a refused origin out of the digests it sends
//     (its entry would differ from o's own to every peer, making them pull
//     o's snapshot each round) and pulls o again only when a peer's
//     digest shows o past the refusal (Refused): one pull per change of
//     o, not one per anti-entropy round.
//
// A new incarnation of o starts unrefused, like every other state.

// refusal is why an origin's records are not held.
type refusal struct {
	seq   uint64 // the origin's seq when refused
	truth bool   // decided by the origin's own snapshot at seq
	usage Usage  // what it would have held
}

// SetBudget bounds what the table holds of every other agent; the zero
// Budget bounds nothing. Set it before the table takes remote changes.
func (t *Table) SetBudget(b Budget) {
	t.mu.Lock()
	t.budget = b
	t.mu.Unlock()
}

// Refusal is a refused origin, as Refused reports it.
type Refusal struct {
	Inc, Seq uint64
	// Truth: the origin's own snapshot at Seq passed the budget, so
	// nothing at or below Seq of that incarnation can change the answer.
	Truth bool
	Usage Usage // what the origin would have held
}

// Refused reports whether origin's records are refused (receive.go).
func (t *Table) Refused(origin string) (Refusal, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.origins[origin]
	if !ok || st.refused == nil {
		return Refusal{}, false
	}
	return Refusal{Inc: st.inc, Seq: st.refused.seq, Truth: st.refused.truth, Usage: st.refused.usage}, true
}

// Covers reports whether a digest entry of the refused origin shows
// nothing the refusal did not decide on: no pull can change it.
func (r Refusal) Covers(e DigestEntry) bool {
	return e.Inc == r.Inc && (e.Seq < r.Seq || (e.Seq == r.Seq && r.Truth))
}

// refuseIfOver drops every record of st when they pass the budget, and
// reports whether it did (Result.Refused).
func (t *Table) refuseIfOver(origin string, st *originState, truth bool) bool {
	if origin == t.local || origin == RulesOrigin || t.budget.within(st.usage()) {
		return false
	}
	u := st.usage()
	for k, e := range st.live.all() {
		t.views.unlink(e)
		t.changed(k)
	}
	for k := range st.retired {
		t.unretire(st, k)
	}
	st.live = liveSet{}
	st.bytes, st.hash = 0, 0
	clear(st.tombs)
	st.writers, st.keys, st.added = nil, nil, nil
	st.clearOK, st.claimed = true, nil
	st.floor = st.seq
	st.refused = &refusal{seq: st.seq, truth: truth, usage: u}
	t.watch.bump()
	return true
}

// admitSnapshot reports whether snapshot s of the refused origin st is to
// be merged (see the top of this file), and if so ends the refusal.
func (st *originState) admitSnapshot(s Snapshot) bool {
	r := st.refused
	if r == nil {
		return true
	}
	if s.Seq < r.seq || (s.Seq == r.seq && (r.truth || !s.Authoritative)) {
		return false
	}
	st.refused = nil
	st.floor = 0 // the snapshot is merged from nothing
	return true
}

// RefusedOrigins lists the refused origins; nil when there are none.
func (t *Table) RefusedOrigins() map[string]Refusal {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out map[string]Refusal
	for o, st := range t.origins {
		if st.refused == nil {
			continue
		}
		if out == nil {
			out = map[string]Refusal{}
		}
		out[o] = Refusal{Inc: st.inc, Seq: st.refused.seq, Truth: st.refused.truth, Usage: st.refused.usage}
	}
	return out
}
