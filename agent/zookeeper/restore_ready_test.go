package zookeeper

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// A session restored from the data dir does not expire while the door
// holds handshakes back for the agent's readiness: its time left starts
// once handshakes are taken, so a client re-attaching meanwhile keeps its
// session and znodes. Before, expiry timers started at restore: with a
// --retry-join peer unreachable, a client with a 10 s session waited the
// 30 s readiness bound and was then told "expired" (issue 24, item 4).
func TestRestoredSessionWaitsForReadiness(t *testing.T) {
	const sid = int64(0x1234)
	passwd := []byte("0123456789abcdef")
	reg := hosttest.New(routes.NewTable("local", 2))
	rec := routes.Record{Znode: &routes.Znode{Path: "/e", Owner: sid}}
	reg.Routes.ApplyLocal([]routes.Record{rec}, nil)
	state, _ := json.Marshal(savedSession{ID: sid, Passwd: passwd, TimeoutMs: 5000, Keys: []string{rec.Key()}})
	const left = 100 * time.Millisecond
	reg.Restore(lease.Lease{Door: door, ID: sessionLeaseID(sid), Keys: []string{rec.Key()},
		Deadline: time.Now().Add(left), State: state})
	reg.NotYet.Store(true)
	s := startLeaseServer(t, reg)
	start := time.Now()

	// Past the time it had left, the agent not ready: still there.
	testutil.Eventually(t, 10*time.Second, func() error {
		s.mu.Lock()
		ss := s.sessions[sid]
		s.mu.Unlock()
		if ss == nil {
			t.Fatalf("the restored session expired %v after restore, the agent not yet ready", time.Since(start).Round(time.Millisecond))
		}
		if time.Since(start) < 3*left {
			return fmt.Errorf("waiting for its time to pass")
		}
		return nil
	})
	r := dialRaw(t, s)
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, SessionID: sid, Passwd: passwd}).Encode(e)
	})
	reg.NotYet.Store(false) // the agent synced: handshakes go ahead
	var resp zkwire.ConnectResponse
	if err := zkwire.Unmarshal(r.recv(), &resp); err != nil || resp.SessionID != sid {
		t.Fatalf("re-attach once ready: %+v %v, want session %x", resp, err, sid)
	}
	if h, _, _ := r.call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/e"}); h.Err != 0 {
		t.Fatalf("exists /e after the re-attach: err %d", h.Err)
	}
}
