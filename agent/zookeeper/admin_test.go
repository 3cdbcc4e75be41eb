package zookeeper

import (
	"io"
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

func TestExpireSessionAndDropConnections(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	resp := r.handshake(false)
	create(t, r, 1, "/e", zkwire.FlagEphemeral)
	if ids := s.SessionIDs(); len(ids) != 1 || ids[0] != resp.SessionID {
		t.Fatalf("sessions %v", ids)
	}
	if s.DropConnections() != 1 {
		t.Fatal("no connection dropped")
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open: %v", err)
	}
	// Re-attach: same session, node kept.
	r2 := dialRaw(t, s)
	r2.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, SessionID: resp.SessionID, Passwd: resp.Passwd}).Encode(e)
	})
	var again zkwire.ConnectResponse
	if err := zkwire.Unmarshal(r2.recv(), &again); err != nil || again.SessionID != resp.SessionID {
		t.Fatalf("re-attach: %+v %v", again, err)
	}
	if h, _, _ := r2.call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/e"}); h.Err != 0 {
		t.Fatalf("ephemeral after re-attach: %d", h.Err)
	}
	if !s.ExpireSession(resp.SessionID) || s.ExpireSession(resp.SessionID) {
		t.Fatal("ExpireSession: want true once, then false")
	}
	r3 := dialRaw(t, s)
	r3.handshake(false)
	if h, _, _ := r3.call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/e"}); h.Err != zkwire.ErrNoNode {
		t.Fatalf("ephemeral after expiry: %d", h.Err)
	}
}
