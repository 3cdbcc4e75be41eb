package gossip

import (
	"testing"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// The member dies between the check that it is alive and the apply of its
// ops (or snapshot): the late apply must not bring its records back, or
// they would stay for good (digests and anti-entropy skip dead origins).
func TestDeathBetweenCheckAndApply(t *testing.T) {
	rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}}
	ops := []routes.Op{{Key: rec.Key(), Seq: 1, Rec: &rec}}
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"ops", encode(msgOps, routes.Delta{Origin: "peer", Inc: 5, Ops: ops})},
		{"snapshot", encode(msgSnapshots, snapshots{From: "peer", Snaps: []routes.Snapshot{{Origin: "peer", Inc: 5, Seq: 1, Authoritative: true, Ops: ops}}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newUnstarted(t, "me")
			ev := (*events)(g)
			node := &memberlist.Node{Name: "peer", Meta: []byte(`{"inc":"5"}`)}
			ev.NotifyJoin(node)
			g.afterAliveCheck = func(string) { ev.NotifyLeave(node) }
			(*delegate)(g).NotifyMsg(tc.msg)
			if _, n := g.table.Len(); n != 0 {
				t.Fatalf("a member that died during the apply has %d records", n)
			}
			// Back alive (it refuted): its records are taken again.
			g.afterAliveCheck = nil
			ev.NotifyJoin(node)
			(*delegate)(g).NotifyMsg(tc.msg)
			if _, n := g.table.Len(); n != 1 {
				t.Fatalf("the member back alive has %d records, want 1", n)
			}
		})
	}
}

// Whatever put them there, records of an origin that is not a live member
// are swept on the next anti-entropy tick.
func TestSweepDropsRecordsOfTheDead(t *testing.T) {
	g := newUnstarted(t, "me")
	ev := (*events)(g)
	ev.NotifyJoin(&memberlist.Node{Name: "live", Meta: []byte(`{"inc":"1"}`)})
	rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}}
	for _, o := range []string{"live", "ghost"} {
		g.table.Apply(routes.Delta{Origin: o, Inc: 1, Ops: []routes.Op{{Key: rec.Key(), Seq: 1, Rec: &rec}}})
	}
	g.sweep()
	if got := g.table.Origins(); len(got) != 3 || got[0] != "live" {
		t.Fatalf("after a sweep the table holds origins %v, want live, me and the rules", got)
	}
}
