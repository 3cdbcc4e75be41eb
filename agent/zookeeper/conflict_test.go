package zookeeper

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// Issue 41 item 4: the session whose write lost a conflict with another
// agent's is expired, so it learns it lost in ZooKeeper's terms; its
// delete never removes the winner's node; where both values are kept, or
// one write saw the other's, nobody is expired.

// tryCall is raw.call that reports a closed connection instead of
// failing the test.
func (r *raw) tryCall(xid, op int32, rec zkwire.Record) (int32, error) {
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: xid, Type: op}).Encode(e)
		if rec != nil {
			rec.Encode(e)
		}
	})
	for {
		b, err := zkwire.ReadPacket(r.br, zkwire.MaxPacket)
		if err != nil {
			return 0, err
		}
		d := zkwire.NewDecoder(b)
		var h zkwire.ReplyHeader
		h.Decode(d)
		if h.Xid == xid {
			return h.Err, nil
		}
	}
}

// expiredWithin waits up to within for session id to be gone from s.
func expiredWithin(t *testing.T, s *Server, id int64, within time.Duration) {
	t.Helper()
	testutil.Eventually(t, within, func() error {
		if slices.Contains(s.SessionIDs(), id) {
			return fmt.Errorf("session %x lives", id)
		}
		return nil
	})
}

func alive(t *testing.T, s *Server, id int64, who string) {
	t.Helper()
	if !slices.Contains(s.SessionIDs(), id) {
		t.Fatalf("%s's session %x was expired", who, id)
	}
}

// raceCreates has a session on each of two linked agents create p as an
// ephemeral node before either agent saw the other's create, B's stamped
// later (so B wins). Nothing is delivered after the creates.
func raceCreates(t *testing.T, p string) (srvs []*Server, regs []*hosttest.Fake, ra, rb *raw, sa, sb int64) {
	t.Helper()
	srvs, regs = startLinked(t, "a", "b")
	ra, rb = dialRaw(t, srvs[0]), dialRaw(t, srvs[1])
	sa, sb = ra.handshake(false).SessionID, rb.handshake(false).SessionID
	mkdirs(t, ra, parentOf(p))
	deliver(regs[0])
	srvs[1].syncDirty()
	for range 5 {
		regs[1].Routes.Stamp()
	}
	for i, r := range []*raw{ra, rb} {
		if h, _, _ := r.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: p, Data: []byte{'A' + byte(i)}, ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
			t.Fatalf("create on %c: %d", 'A'+i, h.Err)
		}
	}
	return srvs, regs, ra, rb, sa, sb
}

// The loser of a create race is expired once the winner's record reaches
// its agent (it lived on, believing it held the node, before), the
// winner lives on, and every agent shows the winner's node.
func TestConflictingCreateExpiresTheLoser(t *testing.T) {
	srvs, regs, _, rb, sa, sb := raceCreates(t, "/lock")
	deliver(regs[1])
	expiredWithin(t, srvs[0], sa, time.Second)
	alive(t, srvs[1], sb, "the winner")
	deliver(regs[0])
	srvs[1].syncDirty()
	ra2 := dialRaw(t, srvs[0])
	ra2.handshake(false)
	for i, r := range []*raw{ra2, rb} {
		if code, data, owner := getData(r, 5, "/lock", false); code != 0 || data != "B" || owner != sb {
			t.Fatalf("agent %d shows err %d data %q owner %x, want B's (%x)", i, code, data, owner, sb)
		}
	}
}

// The loser's delete, sent once the winner's record is in its agent's
// table, answers SESSIONEXPIRED (or finds the connection closed by the
// expiry) and never removes the winner's node (before: OK, and the
// winner's node was gone on every agent), with or without a version.
func TestLosersDeleteNeverRemovesTheWinners(t *testing.T) {
	for _, version := range []int32{-1, 0} {
		t.Run(fmt.Sprint("version ", version), func(t *testing.T) {
			srvs, regs, ra, rb, _, sb := raceCreates(t, "/lock")
			deliver(regs[1]) // in the table; the tree may not be refreshed yet
			code, err := ra.tryCall(7, zkwire.OpDelete, &zkwire.PathVersion{Path: "/lock", Version: version})
			if err == nil && code != zkwire.ErrSessionExpired {
				t.Fatalf("the loser's delete answered %d, want SESSIONEXPIRED", code)
			}
			deliver(regs[0])
			srvs[1].syncDirty()
			if n := len(regs[1].Routes.KVs(cmdNamespace)); n != 0 {
				t.Fatalf("the loser's delete sent %d delete commands to the winner's agent", n)
			}
			if code, data, owner := getData(rb, 5, "/lock", false); code != 0 || data != "B" || owner != sb {
				t.Fatalf("the winner's agent shows err %d data %q owner %x, want B's", code, data, owner)
			}
		})
	}
}

// A delete before the winner's record arrived removes only the loser's
// own node: the winner's stands everywhere, and nobody is expired (the
// order create A, delete A, create B is one ZooKeeper allows).
func TestDeleteBeforeTheConflictArrivesRemovesOnlyItsOwn(t *testing.T) {
	srvs, regs, ra, rb, sa, sb := raceCreates(t, "/lock")
	if h, _, _ := ra.call(7, zkwire.OpDelete, &zkwire.PathVersion{Path: "/lock", Version: 0}); h.Err != 0 {
		t.Fatalf("delete on A: %d", h.Err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		deliver(regs[0])
		deliver(regs[1])
		srvs[0].syncDirty()
		srvs[1].syncDirty()
		for i, r := range []*raw{ra, rb} {
			if code, data, owner := getData(r, 5, "/lock", false); code != 0 || data != "B" || owner != sb {
				return fmt.Errorf("agent %d shows err %d data %q owner %x, want B's", i, code, data, owner)
			}
		}
		return nil
	})
	alive(t, srvs[0], sa, "A")
	alive(t, srvs[1], sb, "B")
}

// Dubbo's and curator-x-discovery's delete and re-create on NODEEXISTS,
// through another agent: the re-create replaces the node it deleted, so
// its first owner is not expired (only its node goes, as in ZooKeeper).
func TestRecreateAfterDeletingAnothersNodeExpiresNobody(t *testing.T) {
	srvs, regs := startLinked(t, "a", "b")
	ra, rb := dialRaw(t, srvs[0]), dialRaw(t, srvs[1])
	sa, sb := ra.handshake(false).SessionID, rb.handshake(false).SessionID
	p := "/services/app/10.0.0.5:20880"
	mkdirs(t, ra, parentOf(p))
	if h, _, _ := ra.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: p, Data: []byte("A"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
		t.Fatalf("create on A: %d", h.Err)
	}
	deliver(regs[0])
	srvs[1].syncDirty()
	for i, want := range []int32{zkwire.ErrNodeExists, 0} {
		if i == 1 {
			if h, _, _ := rb.call(2, zkwire.OpDelete, &zkwire.PathVersion{Path: p, Version: -1}); h.Err != 0 {
				t.Fatalf("delete on B of A's node: %d", h.Err)
			}
		}
		if h, _, _ := rb.call(3, zkwire.OpCreate, &zkwire.CreateRequest{Path: p, Data: []byte("B"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != want {
			t.Fatalf("create %d on B: %d, want %d", i, h.Err, want)
		}
	}
	// B's record may reach A before B's command does.
	deliver(regs[1])
	srvs[0].syncDirty()
	testutil.Eventually(t, 5*time.Second, func() error {
		deliver(regs[0])
		deliver(regs[1])
		if _, ok := regs[0].Routes.LocalRecord(routes.ZnodeKey(p, "")); ok {
			return fmt.Errorf("A still holds its record")
		}
		return nil
	})
	alive(t, srvs[0], sa, "A")
	alive(t, srvs[1], sb, "B")
}

// casRace has sessions on two linked agents setData p (persistent,
// version 0) from version 0 before either saw the other's write.
func casRace(t *testing.T, p string, versions [2]int32) (srvs []*Server, regs []*hosttest.Fake, rs []*raw, ids []int64) {
	t.Helper()
	srvs, regs = startLinked(t, "a", "b")
	rs = []*raw{dialRaw(t, srvs[0]), dialRaw(t, srvs[1])}
	ids = []int64{rs[0].handshake(false).SessionID, rs[1].handshake(false).SessionID}
	mkdirs(t, rs[0], p)
	deliver(regs[0])
	srvs[1].syncDirty()
	for i, r := range rs {
		h, _, _ := r.call(2, zkwire.OpSetData, &zkwire.SetDataRequest{Path: p, Data: []byte{'A' + byte(i)}, Version: versions[i]})
		if h.Err != 0 {
			t.Fatalf("setData on %c: %d", 'A'+i, h.Err)
		}
	}
	deliver(regs[0])
	deliver(regs[1])
	return srvs, regs, rs, ids
}

// Two setData calls from one version on two agents (Curator's
// DistributedAtomicLong): every agent keeps one value, and the session
// whose value lost is expired, the other lives on (before: both lived,
// both told their increment succeeded).
func TestConflictingVersionedSetDataExpiresTheLoser(t *testing.T) {
	srvs, _, _, ids := casRace(t, "/counter", [2]int32{0, 0})
	rule, ok := srvs[0].table.Rule(routes.ZnodeKey("/counter", ""))
	if !ok {
		t.Fatal("no /counter rule")
	}
	winner := int(rule.Znode.Data[0] - 'A')
	loser := 1 - winner
	expiredWithin(t, srvs[loser], ids[loser], time.Second)
	alive(t, srvs[winner], ids[winner], "the winner")
}

// Unversioned writes promise nothing to lose: last writer wins, nobody
// is expired; and a versioned write made over the other's (it saw it)
// expires nobody either.
func TestSetDataThatDidNotRaceExpiresNobody(t *testing.T) {
	srvs, _, _, ids := casRace(t, "/config", [2]int32{-1, -1})
	for i := range srvs {
		alive(t, srvs[i], ids[i], fmt.Sprint("session ", i))
	}
	srvs, regs := startLinked(t, "a", "b")
	rs := []*raw{dialRaw(t, srvs[0]), dialRaw(t, srvs[1])}
	ids = []int64{rs[0].handshake(false).SessionID, rs[1].handshake(false).SessionID}
	mkdirs(t, rs[0], "/counter")
	for v := range int32(4) {
		i := int(v % 2)
		deliver(regs[1-i])
		srvs[i].syncDirty()
		if h, _, _ := rs[i].call(2, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/counter", Data: []byte{'0' + byte(v)}, Version: v}); h.Err != 0 {
			t.Fatalf("setData %d on agent %d: %d", v, i, h.Err)
		}
	}
	deliver(regs[1])
	deliver(regs[0])
	srvs[0].syncDirty()
	srvs[1].syncDirty()
	for i := range srvs {
		alive(t, srvs[i], ids[i], fmt.Sprint("session ", i))
	}
}

// Dubbo's mapping of an interface to applications, exported from two
// agents at once with the same version: both names are kept (merged),
// so nobody lost and nobody is expired.
func TestMergedMappingWritesExpireNobody(t *testing.T) {
	srvs, _, rs, ids := casRace(t, "/dubbo/mapping/demo.Api", [2]int32{0, 0})
	srvs[0].syncDirty()
	srvs[1].syncDirty()
	for i := range srvs {
		alive(t, srvs[i], ids[i], fmt.Sprint("session ", i))
		if code, data, _ := getData(rs[i], 9, "/dubbo/mapping/demo.Api", false); code != 0 || data != "A,B" {
			t.Fatalf("agent %d shows err %d data %q, want A,B", i, code, data)
		}
	}
}

// The winner's node comes and goes before the loser's agent sees it (a
// lock held briefly): the winner's delete tells the loser's agent that
// its record lost, and the loser is expired (before: its node was
// withdrawn quietly, and it went on believing it held the lock).
func TestWinnersDeleteExpiresAHiddenLoser(t *testing.T) {
	srvs, regs, _, rb, sa, sb := raceCreates(t, "/lock")
	deliver(regs[0]) // B's agent sees A's record, hidden under B's
	srvs[1].syncDirty()
	regs[1].Lose() // B's create never reaches A's agent: gossip carries its add and delete as one
	if h, _, _ := rb.call(8, zkwire.OpDelete, &zkwire.PathVersion{Path: "/lock", Version: -1}); h.Err != 0 {
		t.Fatalf("the winner's delete: %d", h.Err)
	}
	deliver(regs[1])
	expiredWithin(t, srvs[0], sa, time.Second)
	alive(t, srvs[1], sb, "the winner")
}
