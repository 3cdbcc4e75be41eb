package routes

import (
	"strconv"
	"strings"
	"time"
)

// RulesOrigin is the pseudo-origin of cluster-scoped records: Dubbo's
// persistent (dynamic=false) URLs such as routers and configurators. No
// agent owns them; any agent may write or delete one, and they outlive the
// agent that wrote them.
//
// Rules travel as ordinary deltas and snapshots of this origin, but their
// ops carry a hybrid logical time (hlc.go) as Seq and the writer's name,
// and conflicting writes resolve last-writer-wins by (time, writer). Merging is therefore
// commutative from any replica, with no authoritative copy; anti-entropy
// pulls rules from whichever peer's digest entry differs. Deletes leave
// tombstones kept for RuleTombstoneTTL, so a delete cannot be undone by a
// replica that was away for less than that.
const RulesOrigin = "~rules"

// RuleTombstoneTTL is how long a deleted rule is remembered. An agent cut
// off for longer, holding the rule, would bring it back when it rejoins.
const RuleTombstoneTTL = 72 * time.Hour

// ApplyRules writes cluster-scoped records: puts replace, deletes remove.
// Like ApplyLocal, only real changes become ops; ok false means nothing
// changed (for a delete: no such rule).
//
// The writer recorded is this agent's name and incarnation: a restarted
// agent's clock may start below its previous run's, and without the
// incarnation it could stamp two different writes with the same (time,
// writer).
func (t *Table) ApplyRules(puts []Record, deletes []string) (d Delta, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.origins[RulesOrigin]
	writer := t.local + "@" + strconv.FormatUint(t.origins[t.local].inc, 10)
	d = Delta{Origin: RulesOrigin}
	for _, r := range puts {
		key := r.Key()
		if key == "" {
			continue
		}
		if e, ok := st.live.get(key); ok && e.equal(r) {
			continue
		}
		rec := r.clone()
		op := Op{Key: key, Seq: t.nextRuleTime(), Rec: &rec, Writer: writer}
		t.applyOp(RulesOrigin, st, op)
		d.Ops = append(d.Ops, op)
	}
	for _, key := range deletes {
		if _, ok := st.live.get(key); !ok {
			continue
		}
		op := Op{Key: key, Seq: t.nextRuleTime(), Writer: writer}
		t.applyOp(RulesOrigin, st, op)
		d.Ops = append(d.Ops, op)
	}
	if len(d.Ops) > 0 {
		t.watch.bump()
	}
	return d, len(d.Ops) > 0
}

// Rule returns the live rule at key.
func (t *Table) Rule(key string) (Record, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.origins[RulesOrigin].live.get(key)
	if !ok {
		return Record{}, false
	}
	return e.clone(), true
}

// CollectRuleTombstones forgets rule deletes older than RuleTombstoneTTL,
// returning how many. The agent calls it now and then.
func (t *Table) CollectRuleTombstones() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	cut := t.now().Add(-RuleTombstoneTTL)
	for k, tb := range t.origins[RulesOrigin].tombs {
		if tb.at.Before(cut) {
			delete(t.origins[RulesOrigin].tombs, k)
			n++
		}
	}
	return n
}

// SetClock replaces the time source tombstones are stamped with (tests).
func (t *Table) SetClock(now func() time.Time) {
	t.mu.Lock()
	t.now = now
	t.mu.Unlock()
}

// KVs returns the KV config entries of one namespace, by key.
func (t *Table) KVs(namespace string) map[string]string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := map[string]string{}
	prefix := KVPrefix(namespace)
	for k, e := range t.origins[RulesOrigin].live.all() {
		// Keys may hold '/', so the prefix alone could match namespace
		// "a" key "b/c" for namespace "a/b".
		if kv := e.record().KV; strings.HasPrefix(k, prefix) && kv != nil && kv.Namespace == namespace {
			out[kv.Key] = kv.Value
		}
	}
	return out
}
