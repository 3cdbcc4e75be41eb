package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/namecast/namecast/routes"
)

// Model is the test's account of what the cluster should hold, kept from
// what the test did and what its calls answered.
type Model struct {
	mu        sync.Mutex
	nodes     map[string]*ownerState // running nodes by name; absent: down
	rules     map[string]*ruleState  // every cluster rule ever written, by key
	anomalies []string               // answers that contradicted the model
}

type ownerState struct {
	regs map[string]held // by primary key
}

// held is one registration of a running node.
type held struct {
	reg      Registration
	recs     []routes.Record
	deadline time.Time // zero: no TTL
}

func (h held) expired(now time.Time) bool { return !h.deadline.IsZero() && !now.Before(h.deadline) }

// ruleState is a cluster rule: present or deleted, and settled unless every
// copy of its current state may have died with crashed nodes.
type ruleState struct {
	rec       routes.Record
	present   bool
	unsettled bool
}

// NewModel returns a model of a cluster with no node running.
func NewModel() *Model {
	return &Model{nodes: map[string]*ownerState{}, rules: map[string]*ruleState{}}
}

// Started records that node name runs, with no registrations (a new
// incarnation: whatever it held before is gone).
func (m *Model) Started(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[name] = &ownerState{regs: map[string]held{}}
}

// Crashed records that node name stopped (crashed or left): its
// registrations are gone. others are the tables of the nodes still
// running: a rule whose current state none of them holds may have died
// with this node, and becomes unsettled.
func (m *Model) Crashed(name string, others []*routes.Table) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.nodes, name)
	var tombs []map[string]bool
	for _, t := range others {
		tombs = append(tombs, ruleTombstones(t))
	}
	for key, r := range m.rules {
		if r.unsettled {
			continue
		}
		held := false
		for i, t := range others {
			if _, live := t.Rule(key); (r.present && live) || (!r.present && tombs[i][key]) {
				held = true
				break
			}
		}
		r.unsettled = !held
	}
}

func ruleTombstones(t *routes.Table) map[string]bool {
	out := map[string]bool{}
	s, _ := t.Snapshot(routes.RulesOrigin)
	for _, op := range s.Ops {
		if op.Rec == nil {
			out[op.Key] = true
		}
	}
	return out
}

// Running reports whether the model has node name running.
func (m *Model) Running(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodes[name] != nil
}

// Registered records that node name accepted reg in a call that began at
// start. A rule is recorded as present whichever node took it.
func (m *Model) Registered(name string, reg Registration, start time.Time) error {
	recs, err := reg.Records()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if reg.Rule() {
		m.rules[reg.Key()] = &ruleState{rec: recs[0], present: true}
		return nil
	}
	n := m.nodes[name]
	if n == nil {
		return fmt.Errorf("chaos: registration on %s, which the model has down", name)
	}
	h := held{reg: reg, recs: recs}
	if reg.TTL > 0 {
		// The agent's deadline starts when it applies the call, later than
		// start: the model expires first, and the checker waits for the
		// agent to follow.
		h.deadline = start.Add(reg.TTL)
	}
	n.regs[reg.Key()] = h
	return nil
}

// Unregistered records an unregistration of reg on node name that
// answered ok, in a call that ended at end. An answer of "not registered"
// for a registration the model holds unexpired is an anomaly: the agent
// lost it.
func (m *Model) Unregistered(name string, reg Registration, ok bool, end time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := reg.Key()
	if reg.Rule() {
		if r := m.rules[key]; r != nil && ok {
			r.present = false
		}
		return
	}
	n := m.nodes[name]
	if n == nil {
		return
	}
	h, had := n.regs[key]
	if had && !ok && !h.expired(end) {
		m.anomalies = append(m.anomalies, fmt.Sprintf("%s answered %q not registered, %v before its TTL ran out", name, key, h.deadline.Sub(end)))
	}
	delete(n.regs, key)
}

// Registrations lists node name's registrations still unexpired at now,
// for the driver to renew or withdraw.
func (m *Model) Registrations(name string, now time.Time) []Registration {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[name]
	if n == nil {
		return nil
	}
	var out []Registration
	for _, k := range slices.Sorted(maps.Keys(n.regs)) {
		if h := n.regs[k]; !h.expired(now) {
			out = append(out, h.reg)
		}
	}
	return out
}

// LiveRules lists the settled rules the model has present, by key.
func (m *Model) LiveRules() []Registration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Registration
	for _, k := range slices.Sorted(maps.Keys(m.rules)) {
		if r := m.rules[k]; r.present && !r.unsettled {
			out = append(out, Registration{URL: r.rec.URL.URL})
		}
	}
	return out
}

// Anomalies are the answers during the run that contradicted the model.
func (m *Model) Anomalies() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.anomalies)
}

// Expected is what every live replica must hold.
type Expected struct {
	Live      []string                            // running nodes, sorted
	Records   map[string]map[string]routes.Record // origin -> key -> record
	Unsettled map[string]routes.Record            // rules that may be present or not
}

// Expected computes what replicas must hold at now: the unexpired
// registrations of running nodes, and the settled present rules under
// routes.RulesOrigin.
func (m *Model) Expected(now time.Time) Expected {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := Expected{Records: map[string]map[string]routes.Record{}, Unsettled: map[string]routes.Record{}}
	for name, n := range m.nodes {
		e.Live = append(e.Live, name)
		recs := map[string]routes.Record{}
		for _, h := range n.regs {
			if h.expired(now) {
				continue
			}
			for _, r := range h.recs {
				recs[r.Key()] = r
			}
		}
		e.Records[name] = recs
	}
	slices.Sort(e.Live)
	rules := map[string]routes.Record{}
	for k, r := range m.rules {
		switch {
		case r.unsettled:
			e.Unsettled[k] = r.rec
		case r.present:
			rules[k] = r.rec
		}
	}
	e.Records[routes.RulesOrigin] = rules
	return e
}

// Counts summarises the model for logs: running nodes, live
// registrations, present and unsettled rules.
func (m *Model) Counts(now time.Time) string {
	e := m.Expected(now)
	recs := 0
	for o, r := range e.Records {
		if o != routes.RulesOrigin {
			recs += len(r)
		}
	}
	return fmt.Sprintf("%d nodes running, %d records expected, %d rules, %d rules unsettled",
		len(e.Live), recs, len(e.Records[routes.RulesOrigin]), len(e.Unsettled))
}
