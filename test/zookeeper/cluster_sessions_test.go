package zookeeper

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/routes"
)

func withGrace(d time.Duration) func(*agent.Config) {
	return func(c *agent.Config) { c.ZooKeeperGrace = agent.Duration(d) }
}

// A client whose connection drops without closeSession loses its session
// and its ephemeral znodes after the grace, everywhere; when it comes back
// it is told its session expired and gets a new one.
func TestSessionExpiresAfterGrace(t *testing.T) {
	c := cluster(t, 2, withGrace(time.Second))
	p := connect(t, zkAddr(t, c, 0), 10*time.Second)
	w := connect(t, zkAddr(t, c, 1), 10*time.Second)
	mkdirs(t, p, "/services/demo")
	if _, err := p.Create("/services/demo/10.0.0.1:1", []byte("{}"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { return hasChild(w, "/services/demo", "10.0.0.1:1") })
	_, _, ch, err := w.ChildrenW("/services/demo")
	if err != nil {
		t.Fatal(err)
	}
	old := p.SessionID()
	cut := time.Now()
	p.dialer.cut(true)
	waitEvent(t, ch, zk.EventNodeChildrenChanged, "/services/demo")
	// grace (1 s) + gossip; far below the 10 s session timeout.
	if d := time.Since(cut); d > 5*time.Second {
		t.Fatalf("ephemeral gone after %v, want about the 1 s grace", d)
	}
	if kids := children(t, w, "/services/demo"); len(kids) != 0 {
		t.Fatalf("children after expiry: %v", kids)
	}
	p.dialer.unblock()
	eventually(t, 15*time.Second, func() error {
		if p.State() != zk.StateHasSession || p.SessionID() == old {
			return errf("state %v, session %x (old %x)", p.State(), p.SessionID(), old)
		}
		return nil
	})
}

// A client that reconnects within the grace keeps its session and its
// ephemeral znodes; nobody watching sees them go.
func TestReattachWithinGraceKeepsSession(t *testing.T) {
	c := cluster(t, 2, withGrace(3*time.Second))
	p := connect(t, zkAddr(t, c, 0), 10*time.Second)
	w := connect(t, zkAddr(t, c, 1), 10*time.Second)
	mkdirs(t, p, providers)
	leaf := providers + "/" + javaEncode(providerURL)
	if _, err := p.Create(leaf, nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, _, err := w.Get(leaf); return err })
	_, _, ch, err := w.ChildrenW(providers)
	if err != nil {
		t.Fatal(err)
	}
	old := p.SessionID()
	p.dialer.cut(false) // go-zookeeper reconnects at once
	// Requests in flight across the cut fail with a connection error; once
	// the client is back, the ephemeral is there under the same session.
	eventually(t, 10*time.Second, func() error {
		_, st, err := p.Exists(leaf)
		if err != nil || st == nil {
			return errf("exists %s: %+v %v", leaf, st, err)
		}
		if st.EphemeralOwner != old || p.SessionID() != old {
			t.Fatalf("after re-attach: owner %x, session %x, want %x", st.EphemeralOwner, p.SessionID(), old)
		}
		return nil
	})
	noEvent(t, ch, 4*time.Second) // past the grace: the session lives on
}

// Watches armed before a connection drops are re-armed by setWatches on
// re-attach, and a change made while the client was away is delivered as
// a catch-up event.
func TestSetWatchesAfterReconnect(t *testing.T) {
	c := cluster(t, 2, withGrace(5*time.Second))
	a := connect(t, zkAddr(t, c, 0), 10*time.Second)
	b := connect(t, zkAddr(t, c, 1), 10*time.Second)
	if _, err := b.Create("/conf", []byte("v1"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create("/quiet", []byte("q"), 0, acl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, _, err := a.Get("/quiet"); return err })
	eventually(t, 10*time.Second, func() error { _, _, err := a.Get("/conf"); return err })
	_, _, changed, err := a.GetW("/conf")
	if err != nil {
		t.Fatal(err)
	}
	_, _, quiet, err := a.GetW("/quiet")
	if err != nil {
		t.Fatal(err)
	}
	old := a.SessionID()
	a.dialer.cut(true)
	eventually(t, 10*time.Second, func() error {
		if a.State() == zk.StateHasSession {
			return errf("still connected")
		}
		return nil
	})
	if _, err := b.Set("/conf", []byte("v2"), -1); err != nil {
		t.Fatal(err)
	}
	// Let the change reach agent 0 before the client is back.
	eventually(t, 10*time.Second, func() error {
		for _, h := range c.Agent(0).Table().Holders(routes.ZnodeKey("/conf", "")) {
			if string(h.Rec.Znode.Data) == "v2" {
				return nil
			}
		}
		return errf("agent 0 has not learned v2 yet")
	})
	a.dialer.unblock()
	waitEvent(t, changed, zk.EventNodeDataChanged, "/conf")
	if a.SessionID() != old {
		t.Fatalf("session changed across the reconnect: %x -> %x", old, a.SessionID())
	}
	data, _, err := a.Get("/conf")
	if err != nil || string(data) != "v2" {
		t.Fatalf("after catch-up: %q %v", data, err)
	}
	// The unchanged node's watch was re-armed, not fired: a later change fires it.
	noEvent(t, quiet, 300*time.Millisecond)
	if _, err := b.Set("/quiet", []byte("q2"), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, quiet, zk.EventNodeDataChanged, "/quiet")
}
