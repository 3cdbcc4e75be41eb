package routes

import (
	"cmp"
	"slices"
	"strings"
)

// The read models below serve inspection (the HTTP API's /v1/origins,
// /v1/rules and /v1/brokers, and the web UI built on them): who owns what,
// rather than what a client needs to route.

// OriginStat is what the table holds of one origin.
type OriginStat struct {
	Origin  string `json:"origin"`
	Inc     uint64 `json:"inc,string"` // a string, as in member tags: JavaScript rounds 64-bit numbers
	Seq     uint64 `json:"seq"`
	Records int    `json:"records"`
}

// OriginStats lists every origin held, the rules pseudo-origin included,
// sorted by name.
func (t *Table) OriginStats() []OriginStat {
	t.mu.RLock()
	out := make([]OriginStat, 0, len(t.origins))
	for o, st := range t.origins {
		out = append(out, OriginStat{Origin: o, Inc: st.inc, Seq: st.seq, Records: st.live.len()})
	}
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b OriginStat) int { return cmp.Compare(a.Origin, b.Origin) })
	return out
}

// RuleEntry is one live cluster-scoped rule with the write that made it:
// Time is its Lamport time, Writer the agent (name@incarnation) that wrote
// it. Later writes to the same key win by (Time, Writer).
type RuleEntry struct {
	Key    string `json:"key"`
	Time   uint64 `json:"time"`
	Writer string `json:"writer"`
	Record Record `json:"-"`
}

// Rules lists the live rules in the order they were written: by Lamport
// time, then writer.
func (t *Table) Rules() []RuleEntry {
	t.mu.RLock()
	st := t.origins[RulesOrigin]
	out := make([]RuleEntry, 0, st.live.len())
	for k, e := range st.live.all() {
		out = append(out, RuleEntry{Key: k, Time: e.seq, Writer: st.writer(k), Record: e.clone()})
	}
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b RuleEntry) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Writer, b.Writer), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// BrokerEntry is one broker registration and the agent it registered
// through.
type BrokerEntry struct {
	Broker
	Origin string
}

// BrokerEntries lists every broker registration, sorted by broker name,
// id, then origin. Two origins may hold the same broker while a move
// between agents settles; both are listed.
func (t *Table) BrokerEntries() []BrokerEntry {
	t.mu.RLock()
	var out []BrokerEntry
	for _, regs := range t.views.brokers {
		for b, origin := range regs {
			out = append(out, BrokerEntry{Broker: *b, Origin: origin})
		}
	}
	t.mu.RUnlock()
	slices.SortFunc(out, func(a, b BrokerEntry) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Origin, b.Origin))
	})
	return out
}

// RulesUnder lists the live rules whose key starts with prefix, sorted by
// key, with their times; index is the highest time of any write under
// prefix, live or deleted (while its tombstone is kept): it moves with
// every change of what the prefix holds, alike on every agent (the
// Consul door's KV index).
func (t *Table) RulesUnder(prefix string) (entries []RuleEntry, index uint64) {
	t.mu.RLock()
	st := t.origins[RulesOrigin]
	for k, e := range st.live.all() {
		if strings.HasPrefix(k, prefix) {
			entries = append(entries, RuleEntry{Key: k, Time: e.seq, Writer: st.writer(k), Record: e.clone()})
			index = max(index, e.seq)
		}
	}
	for k, tb := range st.tombs {
		if strings.HasPrefix(k, prefix) {
			index = max(index, tb.seq)
		}
	}
	t.mu.RUnlock()
	slices.SortFunc(entries, func(a, b RuleEntry) int { return cmp.Compare(a.Key, b.Key) })
	return entries, index
}
