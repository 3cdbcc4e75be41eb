package lease

import (
	"encoding/json"
	"fmt"

	"github.com/namecast/namecast/routes"
)

// What an agent restores of its own origin never outranks what its peers
// already hold of it. The files can be behind what the cluster saw: a
// disk that loses its last write loses the entry of an acknowledged
// withdrawal, and the lease it dropped comes back whole, entries intact
// and nothing to tell, so the withdrawn record would be published again,
// under the new incarnation, and served by every agent.
//
// So each entry (and each lease in leases.json) says where its records
// were written from: our origin's incarnation and seq then (Inc, At).
// Every change of our records at or below At was applied before the
// entry was written, and its own entry (a door writes its lease before
// it applies, Hold) is in the file before it. A restarted agent asks its
// peers, before it publishes anything (gossip: Withhold), what they hold
// of its previous incarnation (routes.Remember), and a restored lease
// loses when a peer holds, for one of its records, an op of the
// incarnation the lease was written in above At that the files do not
// have (a tombstone, or another record), or when a peer holds a later
// incarnation in which the record is gone or other. A lease that loses is
// not restored (as a lease a damaged entry may have changed is not,
// store.go): its records are withdrawn, and its client registers again.
//
// A peer that never saw the change, or an agent alone, cannot tell: what
// the files hold is restored as it is (the README's durability section
// says so).

// written is where a lease's saved records were written from.
type written struct{ inc, at uint64 }

// Unsettled lists the keys of the records of the restored leases not yet
// settled: what the agent asks its peers about (Settle).
func (ls *Store) Unsettled() []string {
	ls.mu.Lock()
	ks := make([]string, 0, len(ls.unsettled))
	for k := range ls.unsettled {
		ks = append(ks, k)
	}
	ls.mu.Unlock()
	var out []string
	for _, k := range ks {
		ls.mu.Lock()
		l, ok := ls.leaseLocked(k)
		ls.mu.Unlock()
		if ok {
			for _, r := range l.Records(ls.table) {
				out = append(out, r.Key())
			}
		}
	}
	return out
}

// Settle compares the restored leases with what peers hold of this
// agent's previous incarnations (views; none: an agent alone, or no peer
// answered), before the doors take them back (RestoredLeases): a lease
// older than what the cluster saw is dropped, logged, and its records
// withdrawn unless a lease kept covers them too. It returns the delta of
// that withdrawal, to publish with the restored records. A second call
// does nothing.
func (ls *Store) Settle(views []routes.Remembered) routes.Delta {
	ls.mu.Lock()
	unsettled := ls.unsettled
	ls.unsettled = map[string]written{}
	ls.mu.Unlock()
	if len(views) == 0 || len(unsettled) == 0 {
		return routes.Delta{}
	}
	var losers []Lease
	var keys []string
	for k, w := range unsettled {
		ls.mu.Lock()
		l, ok := ls.leaseLocked(k)
		ls.mu.Unlock()
		if !ok {
			continue
		}
		recs := l.Records(ls.table)
		why := older(recs, w, views)
		if why == "" {
			continue
		}
		ls.logger.Warn("a restored registration is older than what the cluster already holds of this agent: not restored, its records withdrawn (the data dir lost a later change; its client must register again)",
			"door", l.Door, "id", l.ID, "why", why)
		losers = append(losers, l)
		for _, r := range recs {
			keys = append(keys, r.Key())
		}
	}
	if len(losers) == 0 {
		return routes.Delta{}
	}
	var saving []Saving
	for _, l := range losers {
		ls.mu.Lock()
		rs := ls.restored[l.Door]
		for i := range rs {
			if rs[i].ID == l.ID {
				ls.restored[l.Door] = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		ls.mu.Unlock()
		saving = append(saving, ls.Forget(l.Door, l.ID))
	}
	for _, sv := range saving {
		if err := sv.Wait(); err != nil {
			ls.logger.Error("saving the removal of a restored registration older than the cluster's failed; it is written once the disk takes writes", "err", err)
		}
	}
	var gone []string
	ls.mu.Lock()
	for _, k := range keys {
		hs := map[string]bool{}
		ls.holdersLocked(k, hs)
		if len(hs) == 0 {
			gone = append(gone, k)
		}
	}
	ls.mu.Unlock()
	d, _ := ls.table.ApplyLocal(nil, gone)
	return d
}

// older says why records, saved as of w, are older than a peer's view
// of our previous incarnations ("": they are not, as far as any peer
// knows).
func older(recs []routes.Record, w written, views []routes.Remembered) string {
	if w.inc == 0 {
		return "" // written by a release that did not say where from
	}
	for _, v := range views {
		if v.Inc < w.inc {
			continue // the peer knows an incarnation before the files'
		}
		after := w.at // ops above it are news to the files
		if v.Inc > w.inc {
			after = 0 // a later run than the one that wrote the files
		}
		held := make(map[string]routes.Op, len(v.Ops))
		for _, op := range v.Ops {
			held[op.Key] = op
		}
		for _, r := range recs {
			op, ok := held[r.Key()]
			switch {
			case ok && op.Seq > after && op.Rec == nil:
				return fmt.Sprintf("%s was withdrawn at seq %d of incarnation %d; the files were written at seq %d of incarnation %d", r.Key(), op.Seq, v.Inc, w.at, w.inc)
			case ok && op.Seq > after && !sameRecord(*op.Rec, r):
				return fmt.Sprintf("%s was changed at seq %d of incarnation %d; the files were written at seq %d of incarnation %d", r.Key(), op.Seq, v.Inc, w.at, w.inc)
			case !ok && v.Inc > w.inc:
				return fmt.Sprintf("%s is not held by incarnation %d, which ran after the files were written (incarnation %d)", r.Key(), v.Inc, w.inc)
			}
		}
	}
	return ""
}

func sameRecord(a, b routes.Record) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
