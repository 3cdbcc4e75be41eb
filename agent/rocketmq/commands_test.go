package rocketmq

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// mqadmin may send wipe/add write perm and delete topic to any agent; the
// agent owning the broker's records carries them out.
func TestAdminWritesReachTheOwningAgent(t *testing.T) {
	testutil.CheckLeaks(t)
	regs := hosttest.Cluster("agent-a", "agent-c")
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
			if kv := r.Routes.KVs(cmdNamespace); len(kv) != 0 {
				return fmt.Errorf("%s still holds commands %v", r.Routes.Local(), kv)
			}
		}
		return nil
	})
}

// Commands whose target is gone are collected once this agent has seen
// them for commandTTL on its own clock; a command for a live target is
// never collected by anyone else, however old its issuer's clock says it
// is (issue 10 item 6: no decision compares two hosts' clocks).
func TestStaleCommandsCollectedByLocalClockOnly(t *testing.T) {
	testutil.CheckLeaks(t)
	regs := hosttest.Cluster("agent-a", "agent-b")
	// agent-b is alive (it holds records) but not serving RocketMQ, so it
	// never runs its commands: as if it were slow to.
	regs[1].Apply([]routes.Record{{Broker: &routes.Broker{Cluster: "c", Name: "b", ID: 0, Addr: "10.0.0.9:1"}}}, nil)
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s := startServer(t, regs[0], func(c *Config) { c.clock = clock.Now })
	// The issuer's clock was an hour behind... and an hour ahead.
	behind := fmt.Sprint(clock.Now().Add(-time.Hour).UnixMilli())
	ahead := fmt.Sprint(clock.Now().Add(time.Hour).UnixMilli())
	regs[0].ApplyRules([]routes.Record{
		{KV: &routes.KV{Namespace: cmdNamespace, Key: "agent-b/perm/broker-b", Value: behind + " wipe"}},
		{KV: &routes.KV{Namespace: cmdNamespace, Key: "gone-agent/perm/broker-a", Value: ahead + " wipe"}},
		{KV: &routes.KV{Namespace: cmdNamespace, Key: "junk", Value: "x"}},
	}, nil)
	keys := func() []string {
		var out []string
		for k := range regs[0].Routes.KVs(cmdNamespace) {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if k := keys(); !slices.Equal(k, []string{"agent-b/perm/broker-b", "gone-agent/perm/broker-a"}) {
			return fmt.Errorf("commands %v, want the junk gone and both commands kept", k)
		}
		return nil
	})
	// Before: the command to the live agent-b was deleted at once, its
	// issued time being more than commandTTL behind this agent's clock.
	s.runCommands()
	clock.Advance(commandTTL - time.Second)
	s.runCommands()
	if k := keys(); len(k) != 2 {
		t.Fatalf("collected before this agent saw them for commandTTL: %v left", k)
	}
	clock.Advance(2 * time.Second)
	s.runCommands()
	if k := keys(); !slices.Equal(k, []string{"agent-b/perm/broker-b"}) {
		t.Fatalf("after commandTTL on the local clock: %v left, want only the live target's command", k)
	}
	clock.Advance(24 * time.Hour)
	s.runCommands()
	if k := keys(); len(k) != 1 {
		t.Fatalf("a live target's command was collected by another agent: %v left", k)
	}
}
