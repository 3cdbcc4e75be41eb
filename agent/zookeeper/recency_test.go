package zookeeper

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// deliver hands what from wrote since the last delivery to the other
// agents, as gossip would.
func deliver(from *hosttest.Fake) { from.Deliver(nil) }

// startLinked starts one server per name over linked registries.
func startLinked(t *testing.T, names ...string) ([]*Server, []*hosttest.Fake) {
	t.Helper()
	var srvs []*Server
	regs := hosttest.Cluster(names...)
	for _, reg := range regs {
		reg.HoldDeltas.Store(true)
		s, err := NewServer(Config{Host: reg, DeleteHold: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		doortest.Serve(t, s)
		srvs = append(srvs, s)
	}
	return srvs, regs
}

// getData reads p on r: error code, data and owner.
func getData(r *raw, xid int32, p string, watch bool) (int32, string, int64) {
	h, d, _ := r.call(xid, zkwire.OpGetData, &zkwire.PathWatch{Path: p, Watch: watch})
	if h.Err != 0 {
		return h.Err, "", 0
	}
	var got zkwire.GetDataResponse
	got.Decode(d)
	return 0, string(got.Data), got.Stat.EphemeralOwner
}

// Two sessions on two agents create the same ephemeral path before either
// agent has seen the other's create: both succeed (no consensus refuses
// the second), and once each has the other's record every agent shows the
// one written later by the table's stamps, whatever the agents are named.
// The losing session of a Dubbo URL leaf (which registered the same URL)
// lives on and its watches fire (issue 23 item 5: each agent showed its
// own forever); that of any other znode is expired (conflict_test.go).
func TestConcurrentEphemeralCreatesConvergeOnTheLater(t *testing.T) {
	u := "dubbo://10.0.0.5:20880/demo.Api?z=1&a=2"
	for _, tc := range []struct{ name, path string }{
		{"znode", "/services/app/10.0.0.5:20880"},
		{"Dubbo URL leaf", "/dubbo/demo.Api/providers/" + javaEncode(u)},
	} {
		// Both orders of names: the winner must not depend on them.
		for _, names := range [][]string{{"a", "b"}, {"b", "a"}} {
			t.Run(tc.name+"/"+names[0]+"-first", func(t *testing.T) {
				srvs, regs := startLinked(t, names...)
				ra, rb := dialRaw(t, srvs[0]), dialRaw(t, srvs[1])
				sa, sb := ra.handshake(false), rb.handshake(false)
				mkdirs(t, ra, parentOf(tc.path))
				deliver(regs[0])
				srvs[1].syncDirty()
				// Neither agent sees the other's create, so their stamps
				// are concurrent: B's Lamport clock is moved ahead so B's
				// create is the later one (equal stamps would fall to the
				// owner tie-break).
				for range 5 {
					regs[1].Routes.Stamp()
				}
				if h, _, _ := ra.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: tc.path, Data: []byte("A"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
					t.Fatalf("create on A: %d", h.Err)
				}
				if h, _, _ := rb.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: tc.path, Data: []byte("B"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
					t.Fatalf("create on B: %d", h.Err)
				}
				// A's session watches its node, as a provider's would.
				if code, _, _ := getData(ra, 2, tc.path, true); code != 0 {
					t.Fatalf("getData on A: %d", code)
				}
				deliver(regs[0])
				deliver(regs[1])
				srvs[0].syncDirty()
				srvs[1].syncDirty()
				readers := []*raw{ra, rb}
				if tc.name == "znode" {
					readers = []*raw{dialRaw(t, srvs[0]), rb}
					readers[0].handshake(false)
				} else {
					_, _, evs := ra.call(-2, zkwire.OpPing, nil)
					if len(evs) != 1 || evs[0].Type != zkwire.EventNodeDeleted || evs[0].Path != tc.path {
						t.Fatalf("the losing session's data watch saw %+v, want NodeDeleted on %s", evs, tc.path)
					}
				}
				for i, r := range readers {
					code, data, owner := getData(r, 3, tc.path, false)
					if code != 0 || data != "B" || owner != sb.SessionID {
						t.Fatalf("agent %s shows err %d data %q owner %x; want B's, owner %x (A's session %x)",
							names[i], code, data, owner, sb.SessionID, sa.SessionID)
					}
				}
			})
		}
	}
}

// mkdirs creates p and its missing ancestors as persistent nodes.
func mkdirs(t *testing.T, r *raw, p string) {
	t.Helper()
	if p == "/" {
		return
	}
	mkdirs(t, r, parentOf(p))
	h, _, _ := r.call(100, zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: openACL})
	if h.Err != 0 && h.Err != zkwire.ErrNodeExists {
		t.Fatalf("create %s: %d", p, h.Err)
	}
}

// Dubbo's fault-tolerant create through agent B of a node a session on
// agent A holds: NODEEXISTS, delete (refused with BADARGUMENTS before:
// issue 25), create. The delete asks A to withdraw; B's re-create is
// stamped after A's record, so every agent shows B's, and A's session's
// watch sees its node deleted.
func TestDeleteThroughAnotherAgentWithdrawsTheOwnersRecord(t *testing.T) {
	srvs, regs := startLinked(t, "a", "b")
	ra, rb := dialRaw(t, srvs[0]), dialRaw(t, srvs[1])
	ra.handshake(false)
	sb := rb.handshake(false)
	u := "dubbo://10.0.0.5:20880/demo.Api?z=1&a=2"
	leaf := "/dubbo/demo.Api/providers/" + javaEncode(u)
	mkdirs(t, ra, parentOf(leaf))
	if h, _, _ := ra.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, Data: []byte("A"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
		t.Fatalf("create on A: %d", h.Err)
	}
	if code, _, _ := getData(ra, 2, leaf, true); code != 0 {
		t.Fatalf("getData on A: %d", code)
	}
	deliver(regs[0])
	srvs[1].syncDirty()
	if h, _, _ := rb.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, Data: []byte("B"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != zkwire.ErrNodeExists {
		t.Fatalf("create on B over A's node: %d, want NODEEXISTS", h.Err)
	}
	if h, _, _ := rb.call(2, zkwire.OpDelete, &zkwire.PathVersion{Path: leaf, Version: -1}); h.Err != 0 {
		t.Fatalf("delete on B of A's node: %d", h.Err)
	}
	if code, _, _ := getData(rb, 3, leaf, false); code != zkwire.ErrNoNode {
		t.Fatalf("B still shows the node it deleted: %d", code)
	}
	if h, _, _ := rb.call(4, zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, Data: []byte("B"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
		t.Fatalf("re-create on B: %d", h.Err)
	}
	deliver(regs[1]) // B's command and B's record reach A
	testutil.Eventually(t, 10*time.Second, func() error {
		if _, ok := regs[0].Routes.LocalRecord(routes.URLKey("demo.Api", "providers", "dubbo://10.0.0.5:20880/demo.Api?a=2&z=1")); ok {
			return errors.New("A still holds its record")
		}
		return nil
	})
	deliver(regs[0]) // A's withdrawal, and the command's deletion
	srvs[0].syncDirty()
	srvs[1].syncDirty()
	_, _, evs := ra.call(-2, zkwire.OpPing, nil)
	if len(evs) == 0 || evs[0].Type != zkwire.EventNodeDeleted || evs[0].Path != leaf {
		t.Fatalf("A's session saw %+v, want NodeDeleted on its node first", evs)
	}
	for i, r := range []*raw{ra, rb} {
		if code, data, owner := getData(r, 5, leaf, false); code != 0 || data != "B" || owner != sb.SessionID {
			t.Fatalf("agent %d shows err %d data %q owner %x, want B's", i, code, data, owner)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		deliver(regs[0])
		deliver(regs[1])
		for i, r := range regs {
			if n := len(r.Routes.KVs(cmdNamespace)); n != 0 {
				return fmt.Errorf("agent %d still holds %d commands", i, n)
			}
		}
		return nil
	})
}

// A node registered over HTTP on another agent holds no session there:
// a ZooKeeper delete of it is still refused, with a log line.
func TestDeleteOfAnotherAgentsHTTPRecordIsRefused(t *testing.T) {
	srvs, regs := startLinked(t, "a", "b")
	rb := dialRaw(t, srvs[1])
	rb.handshake(false)
	u := routes.URL{Interface: "demo.Api", Category: "providers", URL: "dubbo://10.0.0.5:20880/demo.Api"}
	regs[0].Apply([]routes.Record{{URL: &u}}, nil)
	deliver(regs[0])
	srvs[1].syncDirty()
	leaf := "/dubbo/demo.Api/providers/" + javaEncode(u.URL)
	if h, _, _ := rb.call(1, zkwire.OpDelete, &zkwire.PathVersion{Path: leaf, Version: -1}); h.Err != zkwire.ErrBadArguments {
		t.Fatalf("delete of an HTTP registration on another agent: %d, want BADARGUMENTS", h.Err)
	}
}
