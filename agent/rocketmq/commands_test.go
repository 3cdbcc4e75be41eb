package rocketmq

import (
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// mqadmin may send wipe/add write perm and delete topic to any agent; the
// agent owning the broker's records carries them out.
func TestAdminWritesReachTheOwningAgent(t *testing.T) {
	testutil.CheckLeaks(t)
	regs := newFakeCluster("agent-a", "agent-c")
	a, c := startServer(t, regs[0]), startServer(t, regs[1])
	broker, admin := dial(t, a), dial(t, c)
	b := brokerA()
	register(t, broker, b)
	if perms(t, admin, "TopicTest")["broker-a"] != 6 {
		t.Fatal("registration on agent-a not visible on agent-c")
	}
	resp := do(t, admin, remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	if resp.ExtFields["wipeTopicCount"] != "2" {
		t.Fatalf("remote wipe answered %v", resp)
	}
	waitPerm := func(want int) {
		t.Helper()
		testutil.Eventually(t, 5*time.Second, func() error {
			for _, cl := range []string{"admin", "broker"} {
				cc := admin
				if cl == "broker" {
					cc = broker
				}
				if p := perms(t, cc, "TopicTest")["broker-a"]; p != want {
					return fmt.Errorf("%s side sees perm %d, want %d", cl, p, want)
				}
			}
			return nil
		})
	}
	waitPerm(4)
	// The wipe is in force on the owner: its re-registrations keep it.
	register(t, broker, b)
	if p := perms(t, admin, "TopicTest")["broker-a"]; p != 4 {
		t.Fatalf("re-registration undid a remote wipe: perm %d", p)
	}
	do(t, admin, remoting.AddWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	waitPerm(6)

	do(t, admin, remoting.DeleteTopicInNamesrv, map[string]string{"topic": "TBW102"}, nil)
	routeEventually(t, broker, "TBW102", gone)

	// Commands are deleted once run.
	testutil.Eventually(t, 5*time.Second, func() error {
		for _, r := range regs {
			if kv := r.table.KVs(cmdNamespace); len(kv) != 0 {
				return fmt.Errorf("%s still holds commands %v", r.table.Local(), kv)
			}
		}
		return nil
	})
}

// Commands whose target never runs them are collected after commandTTL.
func TestStaleCommandsCollected(t *testing.T) {
	reg := newFake()
	s := startServer(t, reg)
	old := fmt.Sprint(time.Now().Add(-2 * commandTTL).UnixMilli())
	reg.ApplyRules([]routes.Record{
		{KV: &routes.KV{Namespace: cmdNamespace, Key: "gone-agent/perm/broker-a", Value: old + " wipe"}},
		{KV: &routes.KV{Namespace: cmdNamespace, Key: "junk", Value: "x"}},
	}, nil)
	testutil.Eventually(t, 5*time.Second, func() error {
		if kv := reg.table.KVs(cmdNamespace); len(kv) != 0 {
			return fmt.Errorf("commands left: %v", kv)
		}
		return nil
	})
	_ = s
}
