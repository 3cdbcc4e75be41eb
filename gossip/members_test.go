package gossip

import (
	"fmt"
	"testing"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// A member that left and came back under its name, before memberlist on
// this side saw it go (its leave gossip was lost; its direct notice was
// not), reappears as a tag update with a new incarnation. That is a new
// member, not the last words of the one that left.
func TestLeftMemberRestartedIsAliveAgain(t *testing.T) {
	g := newUnstarted(t, "me")
	ev := (*events)(g)
	ev.NotifyJoin(&memberlist.Node{Name: "peer", Meta: []byte(`{"inc":"1"}`)})
	g.markLeft("peer", 1)
	if g.alive("peer") {
		t.Fatal("a member that said it is leaving is still alive")
	}
	// The leaving member's own last update changes nothing.
	ev.NotifyUpdate(&memberlist.Node{Name: "peer", Meta: []byte(`{"inc":"1","http":"x"}`)})
	if g.alive("peer") {
		t.Fatal("an update from the member that left revived it")
	}
	// Its next incarnation is alive, and its records are taken.
	ev.NotifyUpdate(&memberlist.Node{Name: "peer", Meta: []byte(`{"inc":"2"}`)})
	if !g.alive("peer") {
		t.Fatal("the restarted member stays left")
	}
	rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b"}}
	(*delegate)(g).NotifyMsg(encode(msgOps, routes.Delta{Origin: "peer", Inc: 2, Ops: []routes.Op{{Key: rec.Key(), Seq: 1, Rec: &rec}}}))
	if _, n := g.table.Len(); n != 1 {
		t.Fatal("records of the restarted member are refused")
	}
}

// A leave notice of an earlier incarnation (its sender was slow, and the
// member has restarted since) does not retire the member that is alive.
func TestStaleLeaveNoticeIsIgnored(t *testing.T) {
	g := newUnstarted(t, "me")
	(*events)(g).NotifyJoin(&memberlist.Node{Name: "peer", Meta: []byte(`{"inc":"3"}`)})
	(*delegate)(g).NotifyMsg(encode(msgLeaving, leaving{Name: "peer", Inc: 2}))
	if !g.alive("peer") {
		t.Fatal("incarnation 2's leave notice retired incarnation 3")
	}
	(*delegate)(g).NotifyMsg(encode(msgLeaving, leaving{Name: "peer", Inc: 3}))
	if g.alive("peer") {
		t.Fatal("the live incarnation's own leave notice was ignored")
	}
}

// When a whole cluster starts, every member sees every other join; asking
// each joiner for its records would be N² packets. The asks (work for the
// worker, which is not running here) stop at the budget's burst, and a
// member that failed is forgotten from the reconnect list when it returns.
func TestJoinAsksAreBudgeted(t *testing.T) {
	g := newUnstarted(t, "me")
	ev := (*events)(g)
	ev.NotifyJoin(&memberlist.Node{Name: "first", Meta: []byte(`{"inc":"1"}`)})
	if len(g.work) != 1 {
		t.Fatalf("the first member seen joining was not asked (%d asks queued)", len(g.work))
	}
	for i := range 3 * askJoinBurst {
		ev.NotifyJoin(&memberlist.Node{Name: fmt.Sprintf("m%d", i), Meta: []byte(`{"inc":"1"}`)})
	}
	// A second of refill may have passed on a slow machine.
	if n := len(g.work); n < askJoinBurst || n > askJoinBurst+askJoinRate+1 {
		t.Fatalf("%d joins queued %d asks, want the burst of %d", 3*askJoinBurst+1, n, askJoinBurst)
	}
	ev.NotifyLeave(&memberlist.Node{Name: "first", State: memberlist.StateLeft})
	if _, ok := g.down["first"]; !ok {
		t.Fatal("a member that left is not in the reconnect list")
	}
	ev.NotifyJoin(&memberlist.Node{Name: "first", Meta: []byte(`{"inc":"2"}`)})
	if _, ok := g.down["first"]; ok || len(g.down) != 0 {
		t.Fatalf("reconnect list %v after the member returned, want empty", g.down)
	}
}

// A member back from a death at the same incarnation is asked what it
// holds only if we dropped records of it when it went down: on an
// overloaded cluster false deaths are many, and every return asked by
// every member was 654 asks a second at 200 processes. A new incarnation
// (a restart) is always asked.
func TestJoinAskedOnlyWhenItMayHoldWhatWeLack(t *testing.T) {
	g := newUnstarted(t, "me")
	ev := (*events)(g)
	node := func(name string, inc int) *memberlist.Node {
		return &memberlist.Node{Name: name, Meta: fmt.Appendf(nil, `{"inc":"%d"}`, inc)}
	}
	asked := map[string]int{}
	g.askedJoin = func(m string) { asked[m]++ }
	ev.NotifyJoin(node("bare", 1))
	ev.NotifyJoin(node("broker", 1))
	if asked["bare"] != 1 || asked["broker"] != 1 {
		t.Fatalf("members seen for the first time were asked %v, want once each", asked)
	}
	rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b"}}
	for seq := uint64(1); seq <= 3; seq++ {
		// The broker holds a record each time it is declared dead; the
		// death drops it here.
		(*delegate)(g).NotifyMsg(encode(msgOps, routes.Delta{Origin: "broker", Inc: 1, Ops: []routes.Op{{Key: rec.Key(), Seq: seq, Rec: &rec}}}))
		if _, n := g.table.Len(); n != 1 {
			t.Fatalf("round %d: the broker's record was not taken", seq)
		}
		ev.NotifyLeave(node("bare", 1))
		ev.NotifyLeave(node("broker", 1))
		if _, n := g.table.Len(); n != 0 {
			t.Fatalf("round %d: the dead broker's record was kept", seq)
		}
		ev.NotifyJoin(node("bare", 1))
		ev.NotifyJoin(node("broker", 1))
		if !g.alive("bare") || !g.alive("broker") {
			t.Fatalf("round %d: a member back from its death is not alive", seq)
		}
	}
	if asked["bare"] != 1 || asked["broker"] != 4 {
		t.Fatalf("after 3 false deaths each: asked %v, want bare once (its first join), broker 4 times", asked)
	}
	ev.NotifyLeave(node("bare", 1))
	ev.NotifyJoin(node("bare", 2))
	if asked["bare"] != 2 {
		t.Fatalf("a restarted member (new incarnation) was not asked: %v", asked)
	}
}
