package rocketmq

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// Issue 23 item 2, in the order gossip may deliver it: the master's agent
// withdraws the group (broker record and queue data, one op each), and its
// queue deletes reach the slave's agent, which syncs its group, before its
// broker delete does. The slave's agent used to take that for the group
// dropping the topics (the master registered, holding none) and deleted
// its copies: TOPIC_NOT_EXIST on every agent until the slave's next
// registration. The copy must stay while the slave is registered.
func TestSlaveKeepsGroupQueuesWhateverOrderTheMastersWithdrawalArrives(t *testing.T) {
	for _, v := range []struct {
		name    string
		version int
		perm    int // after the master left
	}{{"4.9", 409, 6}, {"5.x", remoting.VersionCurrent, 4}} {
		t.Run(v.name, func(t *testing.T) {
			testutil.CheckLeaks(t)
			x := startThree(t)
			m, s := groupMember(0, v.version, 8, 3), groupMember(1, v.version, 8, 3)
			register(t, x.master, m)
			register(t, x.slave, s)
			routeIs(t, x.q, "TopicTest", map[int64]string{0: m.Addr, 1: s.Addr}, 6, 8)
			testutil.Eventually(t, 5*time.Second, func() error {
				if n := len(x.regs[1].LocalRecords(routes.QueuePrefix("broker-a"))); n != 3 {
					return fmt.Errorf("slave's agent holds %d queue records of the group, want 3", n)
				}
				return nil
			})
			x.regs[0].HoldDeltas.Store(true)
			if err := x.master.Unregister(m); err != nil {
				t.Fatal(err)
			}
			isQueue := func(op routes.Op) bool { return strings.HasPrefix(op.Key, routes.QueuePrefix("broker-a")) }
			x.regs[0].Deliver(isQueue)
			x.b.syncGroups()
			if td := route(t, x.q, "TopicTest"); td == nil {
				t.Fatal("TOPIC_NOT_EXIST on the client's agent while the slave is registered")
			}
			x.regs[0].Deliver(func(routes.Op) bool { return true })
			x.regs[0].HoldDeltas.Store(false)
			slaveOnly := map[int64]string{1: s.Addr}
			routeIs(t, x.q, "TopicTest", slaveOnly, v.perm, 8)
			routeIs(t, x.q, syncTopic, slaveOnly, v.perm, 1)
		})
	}
}
