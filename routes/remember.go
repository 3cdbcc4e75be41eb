package routes

import "time"

// What a replica remembers of an origin's previous incarnation. An agent
// restarted from its data dir restores the records its files hold, and
// those may be older than what the cluster already saw of it: a disk that
// lost the entry of an acknowledged withdrawal brings the withdrawn
// record back. So before it publishes, the restarted agent asks its peers
// what they hold of its previous incarnation (agent/lease: Settle), and a
// restored record the cluster saw withdrawn or changed after the files
// were written loses. A replica keeps that incarnation's records and
// tombstones when the new one retires them (retire.go) until the origin's
// own snapshot of the new incarnation settles every key, so the question
// can still be answered after the restarted member's tags announced it;
// and it keeps a dropped origin (its agent was declared dead before it
// came back) for goneFor, unlinked from every view.

// Remembered is what a replica holds of some keys of an origin's last
// incarnation below the one asking: that incarnation, its highest seq,
// and for each key asked that it knows of, its live record or its
// tombstone (an Op with no Rec).
type Remembered struct {
	Inc uint64 `json:"i"`
	Seq uint64 `json:"s"`
	Ops []Op   `json:"ops,omitempty"`
}

// Remember reports what the table holds of keys of origin's newest
// incarnation below below (the asking run's own), whether it is still the
// current one here or already retired; ok false when it holds none.
func (t *Table) Remember(origin string, below uint64, keys []string) (r Remembered, ok bool) {
	if origin == t.local || origin == RulesOrigin || origin == "" {
		return Remembered{}, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	var st *originState // the newest incarnation below below held
	for _, c := range t.remembered(origin) {
		if c != nil && c.inc < below && (st == nil || c.inc > st.inc) {
			st = c
		}
	}
	if st == nil {
		return Remembered{}, false
	}
	r = Remembered{Inc: st.inc, Seq: st.seq}
	for _, k := range keys {
		if e, live := st.live.get(k); live {
			rec := e.clone()
			r.Ops = append(r.Ops, Op{Key: k, Seq: e.seq, Rec: &rec})
		} else if tb, dead := st.tombs[k]; dead {
			r.Ops = append(r.Ops, Op{Key: k, Seq: tb.seq})
		}
	}
	return r, true
}

// remembered lists what the table holds of origin's incarnations: the
// current one, the one it retired, and the one dropped last.
func (t *Table) remembered(origin string) []*originState {
	var out []*originState
	if st := t.origins[origin]; st != nil {
		out = append(out, st, st.prev)
	}
	if g, ok := t.gone[origin]; ok && t.now().Sub(g.at) < goneFor {
		out = append(out, g.st, g.st.prev)
	}
	return out
}

// goneFor is how long a dropped origin is remembered: a restart slower
// than that finds nothing to compare with.
const goneFor = 10 * time.Minute

// goneOrigin is a dropped origin's last state, and when it was dropped.
type goneOrigin struct {
	st *originState
	at time.Time
}

// keepGone remembers dropped origin st, and forgets those dropped more
// than goneFor ago. t.mu held.
func (t *Table) keepGone(origin string, st *originState) {
	t.forgetGoneLocked()
	st.retired, st.keys, st.added = nil, nil, nil
	t.gone[origin] = goneOrigin{st: st, at: t.now()}
}

// ForgetGone lets go of the origins dropped more than goneFor ago, and
// of their records: the agent calls it every few minutes, so a member
// that never comes back is not remembered until it is forgotten
// (gossip's ReconnectTimeout, a day).
func (t *Table) ForgetGone() {
	t.mu.Lock()
	t.forgetGoneLocked()
	t.mu.Unlock()
}

func (t *Table) forgetGoneLocked() {
	now := t.now()
	for o, g := range t.gone {
		if now.Sub(g.at) >= goneFor {
			delete(t.gone, o)
		}
	}
}
