package gossip

import (
	"fmt"
	"testing"

	"github.com/namecast/namecast/routes"
)

// An origin the table refuses for passing the budget (routes' receive.go)
// is left out of the digest we send, and its own digest entry at the
// refused point schedules no pull, round after round: before, its entry
// (that seq, an empty table's hash) differed from the origin's own to every
// anti-entropy round, each pulling its whole snapshot again. Once the
// origin shows a change past the refusal, it is pulled.
func TestRefusedOriginIsNotPulledEachRound(t *testing.T) {
	g := newBare(t, "me", "o")
	g.table.SetBudget(routes.Budget{Records: 2})
	src := routes.NewTable("o", 1)
	for i := range 3 {
		src.ApplyLocal([]routes.Record{{Queue: &routes.Queue{Topic: fmt.Sprintf("T%d", i), BrokerName: "b", Perm: 6}}}, nil)
	}
	snap, _ := src.Snapshot("o")
	snap.Authoritative = true
	g.mergeSnapshots(snapshots{From: "o", Snaps: []routes.Snapshot{snap}})
	if _, ok := g.table.Refused("o"); !ok {
		t.Fatal("an origin past the budget was not refused")
	}
	if _, listed := g.liveDigest()["o"]; listed {
		t.Fatal("the digest we send lists a refused origin")
	}
	for range 5 {
		g.compare("o", src.Digest(), false)
		if n := g.PendingPulls(); n != 0 {
			t.Fatalf("%d pulls scheduled for a refused origin at the refused point", n)
		}
	}
	src.ApplyLocal(nil, []string{routes.QueueKey("b", "T0")})
	g.compare("o", src.Digest(), false)
	if n := g.PendingPulls(); n != 1 {
		t.Fatalf("%d pulls scheduled once the origin changed past the refusal, want 1", n)
	}
}
