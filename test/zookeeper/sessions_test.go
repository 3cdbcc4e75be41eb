package zookeeper_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// reattach cuts s1's TCP connection, changes a node s1 watches while s1 is
// away, and lets s1 back in: it must keep its session and its ephemeral
// node, and learn of the change (go-zookeeper re-sends the watch with
// setWatches; the server answers with the catch-up event).
func reattach(t *testing.T, tr *transcript, s1, s2 *session, o owners) {
	if _, err := s1.Create("/nc/s1-eph", nil, zk.FlagEphemeral, acl); err != nil {
		tr.add("reattach: create /nc/s1-eph", errName(err))
		return
	}
	if _, err := s1.Create("/nc/w", []byte("0"), 0, acl); err != nil {
		tr.add("reattach: create /nc/w", errName(err))
		return
	}
	_, _, w, err := s1.GetW("/nc/w")
	tr.add("reattach: s1 getW /nc/w", errName(err))
	id := s1.SessionID()
	s1.gate.cut()
	_, err = s2.Set("/nc/w", []byte("changed while s1 was away"), -1)
	tr.add("reattach: s2 set /nc/w during the gap", errName(err))
	s1.gate.open()
	tr.add("reattach: s1 back with a session", fmt.Sprint(s1.waitState(t, zk.StateHasSession)))
	tr.add("reattach: same session id", fmt.Sprint(s1.SessionID() == id))
	tr.add("reattach: s1 learns of the change", eventText(w))
	_, st, err := s2.Exists("/nc/s1-eph")
	tr.add("reattach: s1's ephemeral kept", errName(err)+" owner="+ownerOf(st, o))
}

// expire cuts a session's connection for good, as when its process dies:
// the server expires it after the negotiated timeout (4 s here), deletes
// its ephemeral node with the watches that implies, and turns the client
// away with "expired" when it comes back.
func expire(t *testing.T, tr *transcript, addr string, s2 *session, o owners) {
	s3 := connect(t, addr, 4*time.Second)
	o[s3.SessionID()] = "s3"
	if _, err := s3.Create("/nc/s3-eph", nil, zk.FlagEphemeral, acl); err != nil {
		tr.add("expire: create /nc/s3-eph", errName(err))
		return
	}
	_, _, w, err := s2.ChildrenW("/nc")
	tr.add("expire: s2 childrenW /nc", errName(err))
	old := s3.SessionID()
	s3.gate.cut()
	start := time.Now()
	tr.add("expire: s2 sees the ephemeral go", eventText(w))
	t.Logf("%s: session of 4s gone %v after its connection was cut", addr, time.Since(start).Round(10*time.Millisecond))
	ok, _, err := s2.Exists("/nc/s3-eph")
	tr.add("expire: /nc/s3-eph exists", fmt.Sprintf("%s %t", errName(err), ok))
	s3.gate.open()
	tr.add("expire: s3 told its session expired", fmt.Sprint(s3.waitState(t, zk.StateExpired)))
	tr.add("expire: s3 gets a new session", fmt.Sprint(s3.waitState(t, zk.StateHasSession)))
	tr.add("expire: the new session id differs", fmt.Sprint(s3.SessionID() != old && s3.SessionID() != 0))
}

// closeSession: Close sends closeSession, which deletes the session's
// ephemeral nodes at once.
func closeSession(t *testing.T, tr *transcript, addr string, s2 *session, o owners) {
	s4 := connect(t, addr, 10*time.Second)
	if _, err := s4.Create("/nc/s4-eph", nil, zk.FlagEphemeral, acl); err != nil {
		tr.add("close: create /nc/s4-eph", errName(err))
		return
	}
	_, _, w, err := s2.ExistsW("/nc/s4-eph")
	tr.add("close: s2 existsW /nc/s4-eph", errName(err))
	start := time.Now()
	s4.Close()
	tr.add("close: s2 sees the ephemeral go", eventText(w))
	t.Logf("%s: closeSession removed the ephemeral in %v", addr, time.Since(start).Round(time.Millisecond))
}

func ownerOf(st *zk.Stat, o owners) string {
	if st == nil {
		return "nil"
	}
	return o.name(st.EphemeralOwner)
}
