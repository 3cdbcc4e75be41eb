package routes

import (
	"fmt"
	"testing"
	"time"
)

func rule(iface, url string) Record {
	return Record{URL: &URL{Interface: iface, Category: "routers", URL: url}}
}

func TestConcurrentRuleWritesPickOneWinner(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	r := rule("com.foo.Bar", "route://0.0.0.0/com.foo.Bar?rule=x")
	d0, _ := a.ApplyRules([]Record{r}, nil)
	b.Apply(d0)
	// Concurrently: a writes the rule again (after a delete of its own) while
	// b deletes it. Whatever the arrival order, both keep the same winner.
	da1, _ := a.ApplyRules(nil, []string{r.Key()})
	da2, _ := a.ApplyRules([]Record{r}, nil)
	db, _ := b.ApplyRules(nil, []string{r.Key()})
	b.Apply(da2)
	b.Apply(da1)
	a.Apply(db)
	if a.Digest()[RulesOrigin] != b.Digest()[RulesOrigin] {
		t.Fatalf("replicas disagree: %+v vs %+v", a.Digest()[RulesOrigin], b.Digest()[RulesOrigin])
	}
	_, ina := a.Rule(r.Key())
	_, inb := b.Rule(r.Key())
	if ina != inb {
		t.Fatalf("rule present on a: %v, on b: %v", ina, inb)
	}
}

func TestRuleWriterTieBreak(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	key := URLKey("I", "configurators", "override://0.0.0.0/I")
	op := func(writer string) Delta {
		rec := Record{URL: &URL{Interface: "I", Category: "configurators", URL: "override://0.0.0.0/I"}}
		return Delta{Origin: RulesOrigin, Ops: []Op{{Key: key, Seq: 7, Rec: &rec, Writer: writer}}}
	}
	// Equal Lamport times: the greater writer name wins on both replicas,
	// whatever the order of arrival.
	a.Apply(op("x"))
	a.Apply(op("y"))
	b.Apply(op("y"))
	b.Apply(op("x"))
	sa, _ := a.Snapshot(RulesOrigin)
	sb, _ := b.Snapshot(RulesOrigin)
	if sa.Ops[0].Writer != "y" || sb.Ops[0].Writer != "y" {
		t.Fatalf("winners %q and %q, want y on both", sa.Ops[0].Writer, sb.Ops[0].Writer)
	}
}

func TestDeletedRuleStaysDeletedWhenStaleReplicaReturns(t *testing.T) {
	a, stale := NewTable("a", 1), NewTable("stale", 1)
	r := rule("I", "route://0.0.0.0/I?x=1")
	d, _ := a.ApplyRules([]Record{r}, nil)
	stale.Apply(d)
	staleSnap, _ := stale.Snapshot(RulesOrigin) // taken before the delete
	if _, ok := a.ApplyRules(nil, []string{r.Key()}); !ok {
		t.Fatal("delete of an existing rule reported no change")
	}
	a.Merge(staleSnap) // the stale agent rejoins and hands over its rules
	if _, ok := a.Rule(r.Key()); ok {
		t.Fatal("deleted rule came back from a stale replica")
	}
	// And the stale one learns the delete from a's snapshot.
	s, _ := a.Snapshot(RulesOrigin)
	stale.Merge(s)
	if _, ok := stale.Rule(r.Key()); ok || stale.Digest()[RulesOrigin] != a.Digest()[RulesOrigin] {
		t.Fatal("stale replica did not converge on the delete")
	}
}

func TestRulesSurviveTheirWriterAndAreNotOwned(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	d, _ := a.ApplyRules([]Record{rule("I", "route://0.0.0.0/I")}, nil)
	b.Apply(d)
	b.DropOrigin("a", 0)
	if b.DropOrigin(RulesOrigin, 0) {
		t.Fatal("rules pseudo-origin must never be dropped")
	}
	if got := b.URLs("I", "routers"); len(got) != 1 {
		t.Fatalf("rule lost with its writer: %v", got)
	}
	// Any agent may delete it.
	if _, ok := b.ApplyRules(nil, []string{rule("I", "route://0.0.0.0/I").Key()}); !ok {
		t.Fatal("b could not delete a rule a wrote")
	}
}

func TestRuleTombstonesCollectedByAge(t *testing.T) {
	now := time.Unix(1000, 0)
	a := NewTable("a", 1)
	a.SetClock(func() time.Time { return now })
	r := rule("I", "route://0.0.0.0/I")
	a.ApplyRules([]Record{r}, nil)
	a.ApplyRules(nil, []string{r.Key()})
	if n := a.CollectRuleTombstones(); n != 0 {
		t.Fatalf("collected %d fresh tombstones", n)
	}
	now = now.Add(RuleTombstoneTTL + time.Second)
	if n := a.CollectRuleTombstones(); n != 1 {
		t.Fatalf("collected %d old tombstones, want 1", n)
	}
}

func TestRuleOpsWithoutWriterAreInvalid(t *testing.T) {
	a := NewTable("a", 1)
	rec := rule("I", "route://x/I")
	if res := a.Apply(Delta{Origin: RulesOrigin, Ops: []Op{{Key: rec.Key(), Seq: 1, Rec: &rec}}}); res.Invalid != 1 {
		t.Fatalf("rule op without writer: %+v", res)
	}
	if res := a.Apply(Delta{Origin: "b", Inc: 1, Ops: []Op{{Key: rec.Key(), Seq: 1, Rec: &rec, Writer: "b"}}}); res.Invalid != 1 {
		t.Fatalf("origin op with a writer: %+v", res)
	}
}

func TestKVConfigIsARule(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	d, _ := a.ApplyRules([]Record{{KV: &KV{Namespace: "ORDER_TOPIC_CONFIG", Key: "T", Value: "broker-a:4"}}}, nil)
	b.Apply(d)
	if got := b.KVs("ORDER_TOPIC_CONFIG"); got["T"] != "broker-a:4" || len(got) != 1 {
		t.Fatalf("kv on replica: %v", got)
	}
	if _, ok := b.ApplyRules(nil, []string{KVKey("ORDER_TOPIC_CONFIG", "T")}); !ok {
		t.Fatal("delete kv")
	}
	if len(b.KVs("ORDER_TOPIC_CONFIG")) != 0 {
		t.Fatal("kv survives its delete")
	}
}

// A rule written on an agent that has not synced yet, later in time than
// the rules it has not seen: it must win, on the agent that wrote it too.
// With a Lamport clock starting at 1 it lost to every older rule.
func TestFreshAgentsRuleWriteWins(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	old, fresh := NewTable("old", 1), NewTable("fresh", 1)
	old.SetClock(func() time.Time { return t0 })
	fresh.SetClock(func() time.Time { return t0.Add(time.Minute) })
	var ds []Delta
	for i := range 5 { // the key has a history: old's clock has moved on
		d, _ := old.ApplyRules([]Record{{KV: &KV{Namespace: "n", Key: "k", Value: fmt.Sprint("old", i)}}}, nil)
		ds = append(ds, d)
	}
	// A minute later, fresh writes the key before it has synced.
	mine, _ := fresh.ApplyRules([]Record{{KV: &KV{Namespace: "n", Key: "k", Value: "fresh"}}}, nil)
	for _, d := range ds {
		fresh.Apply(d)
	}
	old.Apply(mine)
	for _, tb := range []*Table{old, fresh} {
		if v := tb.KVs("n")["k"]; v != "fresh" {
			t.Fatalf("%s holds %q: the later write on the unsynced agent was reverted", tb.Local(), v)
		}
	}
}

// Causality beats clocks: a write made after its writer saw another one
// wins, however far behind the writer's clock is.
func TestRuleWriteAfterSeeingWinsWhateverTheClocks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ahead, behind := NewTable("ahead", 1), NewTable("behind", 1)
	ahead.SetClock(func() time.Time { return t0.Add(time.Hour) })
	behind.SetClock(func() time.Time { return t0 })
	d1, _ := ahead.ApplyRules([]Record{{KV: &KV{Namespace: "n", Key: "k", Value: "first"}}}, nil)
	behind.Apply(d1)
	d2, _ := behind.ApplyRules([]Record{{KV: &KV{Namespace: "n", Key: "k", Value: "second"}}}, nil)
	ahead.Apply(d2)
	for _, tb := range []*Table{ahead, behind} {
		if v := tb.KVs("n")["k"]; v != "second" {
			t.Fatalf("%s holds %q, want the write made after seeing the first", tb.Local(), v)
		}
	}
}

// RulesUnder's index moves with a put and with a delete under its prefix,
// and not with a change elsewhere.
func TestRulesUnderIndexMovesWithDeletes(t *testing.T) {
	tab := NewTable("a", 1)
	kv := func(k, v string) Record { return Record{KV: &KV{Namespace: "ns", Key: k, Value: v}} }
	tab.ApplyRules([]Record{kv("p/a", "1"), kv("p/b", "2"), kv("q/c", "3")}, nil)
	es, i1 := tab.RulesUnder(KVKey("ns", "p/"))
	if len(es) != 2 || es[0].Record.KV.Key != "p/a" || es[1].Record.KV.Key != "p/b" {
		t.Fatalf("entries %+v", es)
	}
	tab.ApplyRules([]Record{kv("q/c", "4")}, nil)
	if _, i := tab.RulesUnder(KVKey("ns", "p/")); i != i1 {
		t.Errorf("a write elsewhere moved the index %d -> %d", i1, i)
	}
	tab.ApplyRules(nil, []string{KVKey("ns", "p/a")})
	es, i2 := tab.RulesUnder(KVKey("ns", "p/"))
	if len(es) != 1 || i2 <= i1 {
		t.Errorf("after a delete: %d entries, index %d -> %d (want it higher)", len(es), i1, i2)
	}
}
