package zookeeper

import (
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/agenttest"
)

// With a data dir, an agent restart (upgrade) keeps its ZooKeeper
// sessions: another agent never sees their ephemeral znodes go, a client
// that re-attaches with its session id and password keeps session and
// znodes, and a session whose client does not come back is gone after its
// timeout.
func TestRestartKeepsSessions(t *testing.T) {
	const timeout = 4 * time.Second
	c := cluster(t, 2, agenttest.WithDataDirs(t.TempDir()), withGrace(timeout))
	p := connect(t, zkAddr(t, c, 0), timeout)
	lost := connect(t, zkAddr(t, c, 0), timeout)
	w := connect(t, zkAddr(t, c, 1), 10*time.Second)
	mkdirs(t, p, "/services/demo")
	for _, cl := range []struct {
		c    *client
		name string
	}{{p, "kept"}, {lost, "lost"}} {
		if _, err := cl.c.Create("/services/demo/"+cl.name, []byte("{}"), zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() error { return hasChild(w, "/services/demo", cl.name) })
	}
	session := p.SessionID()

	// Agent 1 checks every 10 ms that "kept" never goes, from before the
	// restart until the test ends.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var gone []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if ok, _, err := w.Exists("/services/demo/kept"); err == nil && !ok {
				gone = append(gone, time.Now().Format("15:04:05.000"))
			}
		}
	}()
	checked := func() {
		close(stop)
		wg.Wait()
		if len(gone) > 0 {
			t.Fatalf("agent 1 saw /services/demo/kept missing %d times during the restart, first at %s", len(gone), gone[0])
		}
	}

	lost.dialer.cut(true) // its client never comes back
	restarted := time.Now()
	c.Restart(0)
	eventually(t, 15*time.Second, func() error {
		if p.State() != zk.StateHasSession {
			return errf("client state %v after the restart", p.State())
		}
		return nil
	})
	if got := p.SessionID(); got != session {
		checked()
		t.Fatalf("client re-attached with session %x, want its old %x", got, session)
	}
	// The lost session expires at its deadline: about its timeout after
	// it was last heard, never before the restart took place.
	eventually(t, 3*timeout, func() error {
		if err := hasChild(w, "/services/demo", "lost"); err == nil {
			return errf("the lost session's znode is still listed %v after the restart", time.Since(restarted))
		}
		return nil
	})
	// The kept one outlives its timeout counted from the restart: its
	// client re-attached and keeps pinging. Watched the whole time, not
	// just at the end: it must never be missing.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(timeout + time.Second); time.Now().Before(end); <-tick.C {
		if err := hasChild(w, "/services/demo", "kept"); err != nil {
			checked()
			t.Fatal(err)
		}
	}
	if ok, _, err := p.Exists("/services/demo/kept"); err != nil || !ok {
		checked()
		t.Fatalf("the client's own view after the restart: exists %v, err %v", ok, err)
	}
	checked()
}
