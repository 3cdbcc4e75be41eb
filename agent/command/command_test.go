package command

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

const ns = "~test.cmd"

// inboxOn is an inbox of table a ("agent-a") that records what it runs
// and drops, and deletes rules from a.
func inboxOn(a *routes.Table) (*Inbox, *[]Command, *[]string) {
	var ran []Command
	var dropped []string
	in := &Inbox{Namespace: ns, TTL: time.Minute,
		Valid:   func(c Command) bool { return c.Op != "unknown" },
		Dropped: func(key, _ string) { dropped = append(dropped, key) },
		Run:     func(c Command) bool { ran = append(ran, c); return c.Param != "fails" },
		Remove:  func(keys []string) { a.ApplyRules(nil, keys) },
	}
	return in, &ran, &dropped
}

// cluster is agent-a's table, in which agent-b holds a record and
// "gone-agent" none.
func cluster(t *testing.T) *routes.Table {
	a, b := routes.NewTable("agent-a", 1), routes.NewTable("agent-b", 1)
	d, ok := b.ApplyLocal([]routes.Record{{Broker: &routes.Broker{Cluster: "c", Name: "b", Addr: "10.0.0.9:1"}}}, nil)
	if !ok {
		t.Fatal("agent-b's record was refused")
	}
	a.Apply(d)
	return a
}

func keys(a *routes.Table) []string {
	var out []string
	for k := range a.KVs(ns) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The target runs its command once and deletes it; a malformed or
// unknown command is deleted by whoever reads it, with the door told; a
// gone target's command goes once this agent has seen it unchanged for
// TTL on its own clock, a live target's never, however far the issuer's
// clock was from this one's.
func TestCollectRunsMineAndCollectsByTheLocalClockOnly(t *testing.T) {
	a := cluster(t)
	in, ran, dropped := inboxOn(a)
	now := time.Unix(1700000000, 0)
	a.ApplyRules([]routes.Record{
		Rule(ns, "agent-a", "perm", "broker-a", "wipe", now.Add(time.Hour)),
		Rule(ns, "agent-b", "perm", "broker-b", "wipe", now.Add(-time.Hour)),
		Rule(ns, "gone-agent", "perm", "broker-c", "add", now.Add(time.Hour)),
		Rule(ns, "agent-b", "unknown", "x", "", now),
		{KV: &routes.KV{Namespace: ns, Key: "junk", Value: "x"}},
		{KV: &routes.KV{Namespace: ns, Key: "agent-b/perm/broker-d", Value: "not-a-time wipe"}},
	}, nil)
	in.Collect(a, now)
	if want := []Command{{Target: "agent-a", Op: "perm", Subject: "broker-a", Param: "wipe"}}; !slices.Equal(*ran, want) {
		t.Fatalf("ran %+v; want %+v", *ran, want)
	}
	slices.Sort(*dropped)
	if want := []string{"agent-b/perm/broker-d", "agent-b/unknown/x", "junk"}; !slices.Equal(*dropped, want) {
		t.Fatalf("dropped %v; want %v", *dropped, want)
	}
	if got, want := keys(a), []string{"agent-b/perm/broker-b", "gone-agent/perm/broker-c"}; !slices.Equal(got, want) {
		t.Fatalf("left %v; want %v", got, want)
	}
	in.Collect(a, now.Add(time.Minute-time.Second))
	if got := keys(a); len(got) != 2 {
		t.Fatalf("collected before this agent saw them for the TTL: %v left", got)
	}
	in.Collect(a, now.Add(time.Minute+time.Second))
	if got, want := keys(a), []string{"agent-b/perm/broker-b"}; !slices.Equal(got, want) {
		t.Fatalf("after the TTL on the local clock: %v left; want %v", got, want)
	}
	in.Collect(a, now.Add(24*time.Hour))
	if got := keys(a); len(got) != 1 {
		t.Fatalf("a live target's command was collected by another agent: %v left", got)
	}
	if len(*ran) != 1 {
		t.Fatalf("ran %d commands; want the one addressed here, once", len(*ran))
	}
}

// A command whose value changes (a later command for the same target, op
// and subject) is seen anew: the TTL counts from the change.
func TestChangedCommandIsSeenAnew(t *testing.T) {
	a := cluster(t)
	in, _, _ := inboxOn(a)
	now := time.Unix(1700000000, 0)
	a.ApplyRules([]routes.Record{Rule(ns, "gone-agent", "perm", "b", "wipe", now)}, nil)
	in.Collect(a, now)
	a.ApplyRules([]routes.Record{Rule(ns, "gone-agent", "perm", "b", "add", now)}, nil)
	in.Collect(a, now.Add(50*time.Second))
	in.Collect(a, now.Add(70*time.Second))
	if got := keys(a); len(got) != 1 {
		t.Fatalf("a command replaced 20 s before was collected: %v left", got)
	}
	in.Collect(a, now.Add(111*time.Second))
	if got := keys(a); len(got) != 0 {
		t.Fatalf("still %v a TTL after the change", got)
	}
}

// Concurrent Collects run a command once: the inbox holds its lock from
// reading a command until its rule is deleted. Run it under -race.
func TestConcurrentCollectsRunACommandOnce(t *testing.T) {
	a := cluster(t)
	for round := range 50 {
		var runs atomic.Int64
		in := &Inbox{Namespace: ns, TTL: time.Minute,
			Run:    func(Command) bool { runs.Add(1); return true },
			Remove: func(keys []string) { a.ApplyRules(nil, keys) }}
		a.ApplyRules([]routes.Record{Rule(ns, "agent-a", "perm", fmt.Sprint("b", round), "wipe", time.Now())}, nil)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); in.Collect(a, time.Now()) }()
		}
		wg.Wait()
		if n := runs.Load(); n != 1 {
			t.Fatalf("round %d: the command ran %d times", round, n)
		}
	}
}

// A command addressed here that is not done (its change could not be
// saved) stays, and runs again at the next Collect until it is.
func TestCommandNotDoneStaysAndRunsAgain(t *testing.T) {
	a := cluster(t)
	in, ran, _ := inboxOn(a)
	now := time.Unix(1700000000, 0)
	a.ApplyRules([]routes.Record{Rule(ns, "agent-a", "perm", "b", "fails", now)}, nil)
	in.Collect(a, now)
	in.Collect(a, now.Add(time.Hour))
	if len(*ran) != 2 || len(keys(a)) != 1 {
		t.Fatalf("ran %d times, %v left; want 2 runs and the command kept", len(*ran), keys(a))
	}
	a.ApplyRules([]routes.Record{Rule(ns, "agent-a", "perm", "b", "works", now)}, nil)
	in.Collect(a, now.Add(2*time.Hour))
	if len(*ran) != 3 || len(keys(a)) != 0 {
		t.Fatalf("ran %d times, %v left; want 3 runs and the command gone once done", len(*ran), keys(a))
	}
}
