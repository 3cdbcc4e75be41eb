package routes

import (
	"errors"
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
	d = t.ruleOpsLocked(puts, deletes, true)
	if len(d.Ops) > 0 {
		t.watch.bump()
	}
	return d, len(d.Ops) > 0
}

// PrepareRules is ApplyRules without the applying: the delta ApplyRules
// would make, stamped with fresh rule times, for the caller to save before
// it applies it with Apply (last writer wins, so a write that lands in
// between from a peer is ordered as it would have been). Nothing in the
// table changes but the rule clock.
func (t *Table) PrepareRules(puts []Record, deletes []string) (d Delta, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d = t.ruleOpsLocked(puts, deletes, false)
	return d, len(d.Ops) > 0
}

// ruleOpsLocked stamps an op for each put that changes a rule and each
// delete of a live one, written by this agent's name and incarnation;
// with apply, each op is applied as it is made (so a later put or delete
// of the same key sees it). t.mu held.
func (t *Table) ruleOpsLocked(puts []Record, deletes []string, apply bool) Delta {
	st := t.origins[RulesOrigin]
	writer := t.local + "@" + strconv.FormatUint(t.origins[t.local].inc, 10)
	d := Delta{Origin: RulesOrigin}
	add := func(op Op) {
		if apply {
			t.applyOp(RulesOrigin, st, op)
		}
		d.Ops = append(d.Ops, op)
	}
	for _, r := range puts {
		key := r.Key()
		if key == "" {
			continue
		}
		if e, ok := st.live.get(key); ok && e.equal(r) {
			continue
		}
		rec := r.clone()
		add(Op{Key: key, Seq: t.nextRuleTime(), Rec: &rec, Writer: writer})
	}
	for _, key := range deletes {
		if _, ok := st.live.get(key); !ok {
			continue
		}
		add(Op{Key: key, Seq: t.nextRuleTime(), Writer: writer})
	}
	return d
}

// RulesSize is the size of every live rule as RuleSize counts it, and the
// size of the rules at d's keys (what d would replace).
func (t *Table) RulesSize(d Delta) (total, replaced int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st := t.origins[RulesOrigin]
	for k, e := range st.live.all() {
		total += RuleSize(k, e.record())
	}
	for _, op := range d.Ops {
		if e, ok := st.live.get(op.Key); ok {
			replaced += RuleSize(op.Key, e.record())
		}
	}
	return total, replaced
}

// ErrRulesFull is the error of a rule write refused because the rules
// would pass the agent's bound on them (doors tell it apart: ZooKeeper
// answers QUOTAEXCEEDED).
var ErrRulesFull = errors.New("rules limit reached")

// RuleSize is what holding one rule costs, as the bound on rules counts
// it: its key (which holds a URL's text, a KV entry's namespace and key,
// a znode's path), the content the key does not hold, and 64 for the
// rest.
func RuleSize(key string, r Record) int {
	n := 64 + len(key)
	if kv := r.KV; kv != nil {
		n += len(kv.Value)
	}
	if z := r.Znode; z != nil {
		n += len(z.Data)
	}
	if m := r.Mapping; m != nil {
		n += len(m.Bname) + len(m.Scope) + len(m.IDs)
	}
	return n
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

// RuleWriter is the writer of the live rule at key, "{agent}@{incarnation}"
// (ApplyRules), or "" if there is none: two agents' writes of one rule
// can carry equal Lamport stamps, never the same writer and time.
func (t *Table) RuleWriter(key string) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.origins[RulesOrigin].writer(key)
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
