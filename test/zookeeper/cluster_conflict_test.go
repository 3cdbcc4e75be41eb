package zookeeper

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/gossip/gossiptest"
)

// Two sessions on agents A and B create the same ephemeral path while A
// cannot reach B or C (no consensus refuses the second create, so both
// succeed). Once the network heals, every agent shows one owner and its
// data within a few seconds, the later create by the table's stamps
// (issue 23 item 5: each agent showed its own session's node forever).
// The losing session of a znode is expired, as a ZooKeeper server would
// have refused its create (issue 41 item 4: it lived on, believing it
// held the node); that of a Dubbo URL leaf registered the same URL, lost
// nothing, and its data watch fires NodeDeleted, as a ZooKeeper client's
// does when its node is deleted and another session creates it.
func TestConcurrentEphemeralCreatesConvergeAcrossAgents(t *testing.T) {
	leaf := "/dubbo/demo.Api/providers/" + javaEncode("dubbo://10.0.0.5:20880/demo.Api?z=1&a=2")
	for name, path := range map[string]string{"znode": "/services/app/10.0.0.5:20880", "dubbo-url-leaf": leaf} {
		t.Run(name, func(t *testing.T) {
			net := gossiptest.NewNetwork(1)
			t.Cleanup(net.Close)
			c := cluster(t, 3, agenttest.WithNetwork(net))
			clients := make([]*client, 3)
			for i := range clients {
				clients[i] = connect(t, zkAddr(t, c, i), 10*time.Second)
			}
			a, b := clients[0], clients[1]
			mkdirs(t, a, parentOf(path))
			for _, cl := range clients[1:] {
				eventually(t, 10*time.Second, func() error { _, _, err := cl.Get(parentOf(path)); return err })
			}

			net.Partition([]string{c.Name(0)}, []string{c.Name(1), c.Name(2)})
			if _, err := a.Create(path, []byte("A"), zk.FlagEphemeral, acl); err != nil {
				t.Fatalf("create through A: %v", err)
			}
			if _, err := b.Create(path, []byte("B"), zk.FlagEphemeral, acl); err != nil {
				t.Fatalf("create through B: %v", err)
			}
			_, _, aw, errA := a.GetW(path)
			_, _, bw, errB := b.GetW(path)
			if errA != nil || errB != nil {
				t.Fatalf("getW: %v %v", errA, errB)
			}
			net.Heal()

			owners := map[string]int64{"A": a.SessionID(), "B": b.SessionID()}
			var winner string
			eventually(t, 15*time.Second, func() error {
				seen := map[string]bool{}
				for i, cl := range clients {
					data, st, err := cl.Get(path)
					if err != nil {
						return fmt.Errorf("agent %d: %v", i, err)
					}
					if st.EphemeralOwner != owners[string(data)] {
						return fmt.Errorf("agent %d shows %q owned by %x, not that session's", i, data, st.EphemeralOwner)
					}
					seen[string(data)] = true
					winner = string(data)
				}
				if len(seen) != 1 {
					return fmt.Errorf("agents disagree: %v", seen)
				}
				return nil
			})
			loser, winnerW, loserC := aw, bw, a
			if winner == "A" {
				loser, winnerW, loserC = bw, aw, b
			}
			if name == "znode" {
				// Its node was replaced, then its session expired: the
				// watch sees whichever reached the client first.
				if ev := <-loser; ev.Err != zk.ErrSessionExpired && ev.Type != zk.EventNodeDeleted {
					t.Fatalf("the losing session's watch saw %+v, want NodeDeleted or its session expired", ev)
				}
				waitExpired(t, loserC, 10*time.Second)
			} else {
				waitEvent(t, loser, zk.EventNodeDeleted, path)
			}
			select {
			case ev := <-winnerW:
				t.Fatalf("the winning session's watch fired: %+v", ev)
			default:
			}
		})
	}
}

// parentOf is the parent path of p.
func parentOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}

// waitExpired waits for c's session to be reported expired.
func waitExpired(t *testing.T, c *client, within time.Duration) {
	t.Helper()
	if !expiredSoon(c, within) {
		t.Fatalf("session not expired within %v (state %v)", within, c.State())
	}
}

// expiredSoon reports whether c's first session is expired within d: go-
// zookeeper reports StateExpired and opens a new session. The event can
// be dropped (its channel holds 6), so the session id is checked too.
func expiredSoon(c *client, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case ev := <-c.events:
			if ev.State == zk.StateExpired {
				return true
			}
		case <-time.After(10 * time.Millisecond):
		}
		if c.SessionID() != c.sid {
			return true
		}
	}
	return false
}
