package gossip

import (
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// newBare is a Gossip with no memberlist: its sends go nowhere, which is
// all the pull bookkeeping needs.
func newBare(t testing.TB, name string, alive ...string) *Gossip {
	t.Helper()
	cfg, _ := Profile("lan")
	cfg.Table = routes.NewTable(name, 1)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alive {
		g.members[a] = &member{status: StatusAlive}
	}
	return g
}

// A gap seen again while its pull is in flight is not pulled again: under
// load, answers slower than an anti-entropy round used to pile up pulls of
// the same snapshot.
func TestPullInFlightIsNotRepeated(t *testing.T) {
	g := newBare(t, "me", "peer", "o")
	src := routes.NewTable("o", 1)
	src.ApplyLocal([]routes.Record{{Queue: &routes.Queue{Topic: "T", BrokerName: "b", Perm: 6}}}, nil)
	theirs := src.Digest()

	g.compare("peer", theirs, true)
	now := time.Now()
	g.pullDue(now)
	if p := g.pending["o"]; p.sent.IsZero() {
		t.Fatalf("pull not sent: %+v", p)
	}
	// The next rounds see the same gap: nothing new is scheduled or sent.
	for i := range 5 {
		g.compare("peer", theirs, true)
		at := now.Add(time.Duration(i+1) * time.Second)
		g.pullDue(at)
		if p := g.pending["o"]; !p.sent.Equal(now) {
			t.Fatalf("round %d pulled again: %+v", i, p)
		}
	}
	// The answer ends the pull.
	snap, _ := src.Snapshot("o")
	g.mergeSnapshots(snapshots{From: "peer", Snaps: []routes.Snapshot{snap}})
	if n := g.PendingPulls(); n != 0 {
		t.Fatalf("%d pulls pending after the answer", n)
	}
	if e, _ := g.table.Entry("o"); e != theirs["o"] {
		t.Fatalf("entry %+v, want %+v", e, theirs["o"])
	}
}

// A pull that is never answered may be repeated after pullTimeout, and a
// newer target seen while a pull was in flight is pulled again at once
// when the answer falls short of it.
func TestPullInFlightTimesOutAndChasesNewerTargets(t *testing.T) {
	g := newBare(t, "me", "peer", "o")
	src := routes.NewTable("o", 1)
	src.ApplyLocal([]routes.Record{{Queue: &routes.Queue{Topic: "T", BrokerName: "b", Perm: 6}}}, nil)
	old := src.Digest()
	oldSnap, _ := src.Snapshot("o")

	g.compare("peer", old, true)
	now := time.Now()
	g.pullDue(now)
	g.pullDue(now.Add(pullTimeout + time.Millisecond))
	if n := g.PendingPulls(); n != 0 {
		t.Fatalf("timed-out pull still pending (%d)", n)
	}
	g.compare("peer", old, true)
	g.pullDue(time.Now())
	src.ApplyLocal([]routes.Record{{Queue: &routes.Queue{Topic: "U", BrokerName: "b", Perm: 6}}}, nil)
	if !g.schedulePull("o", "peer", src.Digest()["o"], true) {
		t.Fatal("a newer target while in flight is news")
	}
	g.mergeSnapshots(snapshots{From: "peer", Snaps: []routes.Snapshot{oldSnap}})
	p, ok := g.pending["o"]
	if !ok || !p.sent.IsZero() || p.target != src.Digest()["o"] {
		t.Fatalf("answer short of the newer target: pending %+v (ok %v)", p, ok)
	}
}

// Each part of a split answer restarts the pull's timeout: a large origin
// whose parts take longer than pullTimeout in all is not pulled again
// while they still arrive, but one that stops arriving is.
func TestPullTimeoutRestartsWithEachPart(t *testing.T) {
	g := newBare(t, "me", "peer", "o")
	src := routes.NewTable("o", 1)
	var recs []routes.Record
	for i := range 200 {
		recs = append(recs, routes.Record{Queue: &routes.Queue{Topic: fmt.Sprintf("T%03d", i), BrokerName: "b", Perm: 6}})
	}
	src.ApplyLocal(recs, nil)
	snap, _ := src.Snapshot("o")
	parts, _ := snap.Split(2 << 10)
	if len(parts) < 3 {
		t.Fatalf("%d parts", len(parts))
	}
	g.compare("peer", src.Digest(), false)
	start := time.Now()
	g.pullDue(start.Add(time.Hour)) // past the grace: sent
	p := g.pending["o"]
	p.sent = start.Add(-pullTimeout + time.Second) // about to time out
	g.pending["o"] = p
	g.mergeSnapshots(snapshots{From: "peer", Snaps: parts[:1]})
	g.pullDue(time.Now().Add(2 * time.Second))
	if p, ok := g.pending["o"]; !ok || !p.inFlight(time.Now().Add(2*time.Second)) {
		t.Fatalf("a pull whose parts are arriving timed out: %+v, %v", p, ok)
	}
	g.pullDue(time.Now().Add(pullTimeout + time.Second))
	if _, ok := g.pending["o"]; ok {
		t.Fatal("a pull whose parts stopped arriving did not time out")
	}
}
