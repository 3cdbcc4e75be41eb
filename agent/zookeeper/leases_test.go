package zookeeper

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

func startLeaseServer(t *testing.T, reg *hosttest.Fake) *Server {
	t.Helper()
	s, err := NewServer(Config{Host: reg, DeleteHold: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	doortest.Serve(t, s)
	return s
}

// A session's lease covers its ephemeral znodes and carries what resumes
// it; closeSession drops the lease before withdrawing the znodes; a
// restored lease resumes the session for a re-attach with its password.
func TestSessionLease(t *testing.T) {
	reg := hosttest.New(routes.NewTable("local", 1))
	reg.KeepEvents.Store(true)
	s := startLeaseServer(t, reg)
	r := dialRaw(t, s)
	resp := r.handshake(false)
	id := hexID(resp.SessionID)
	if _, ok := reg.Lease(door, id); ok {
		t.Fatal("a session without ephemeral znodes holds a lease")
	}
	if h, _, _ := r.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/e", ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
		t.Fatalf("create: err %d", h.Err)
	}
	l, ok := reg.Lease(door, id)
	if !ok {
		t.Fatal("no lease after an ephemeral create")
	}
	var st savedSession
	if err := json.Unmarshal(l.State, &st); err != nil {
		t.Fatal(err)
	}
	key := routes.Record{Znode: &routes.Znode{Path: "/e"}}.Key()
	if st.ID != resp.SessionID || string(st.Passwd) != string(resp.Passwd) || st.TimeoutMs != 5000 ||
		len(st.Keys) != 0 || !slices.Equal(l.Keys, []string{key}) {
		t.Fatalf("lease %+v state %+v, want session %x, its password, 5000 ms, key %s in the lease's keys (not its state's)", l, st, resp.SessionID, key)
	}
	if left := time.Until(l.Deadline); left <= 0 || left > 5*time.Second {
		t.Fatalf("deadline in %v, want within the 5 s timeout", left)
	}
	r.call(2, zkwire.OpCloseSession, nil)
	got := reg.Events()
	if want := []string{"drop " + id, "withdraw " + key}; !slices.Equal(got, want) {
		t.Fatalf("closeSession did %q, want %q", got, want)
	}

	// The agent restarted: the record is back, the lease restored.
	reg2 := hosttest.New(routes.NewTable("local", 2))
	rec := routes.Record{Znode: &routes.Znode{Path: "/e", Owner: resp.SessionID}}
	reg2.Routes.ApplyLocal([]routes.Record{rec}, nil)
	l.Deadline = time.Now().Add(5 * time.Second)
	reg2.Restore(l)
	s2 := startLeaseServer(t, reg2)
	bad := dialRaw(t, s2)
	bad.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, SessionID: resp.SessionID, Passwd: make([]byte, 16)}).Encode(e)
	})
	var badResp zkwire.ConnectResponse
	if err := zkwire.Unmarshal(bad.recv(), &badResp); err != nil || badResp.SessionID != 0 {
		t.Fatalf("a wrong password re-attached: %+v %v", badResp, err)
	}
	r2 := dialRaw(t, s2)
	r2.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, SessionID: resp.SessionID, Passwd: resp.Passwd}).Encode(e)
	})
	var again zkwire.ConnectResponse
	if err := zkwire.Unmarshal(r2.recv(), &again); err != nil || again.SessionID != resp.SessionID {
		t.Fatalf("re-attach after the restart: %+v %v", again, err)
	}
	if h, d, _ := r2.call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/e"}); h.Err != 0 {
		t.Fatalf("exists /e after the re-attach: err %d", h.Err)
	} else {
		var stat zkwire.Stat
		stat.Decode(d)
		if stat.EphemeralOwner != resp.SessionID {
			t.Fatalf("owner %x, want the resumed session %x", stat.EphemeralOwner, resp.SessionID)
		}
	}
}
