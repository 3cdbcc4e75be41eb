package rocketmq

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// threeAgents is a master's agent (A), a slave's (B) and a client's (C).
// Their names sort B < C < A, so that a view that picks between agents by
// name (the bug) prefers the slave's side.
type threeAgents struct {
	regs             []*hosttest.Fake
	a, b, c          *Server
	master, slave, q *rocketmqtest.Client
}

func startThree(t *testing.T) *threeAgents {
	t.Helper()
	regs := hosttest.Cluster("mq-3", "mq-1", "mq-2")
	x := &threeAgents{regs: regs, a: startServer(t, regs[0]), b: startServer(t, regs[1]), c: startServer(t, regs[2])}
	x.master, x.slave, x.q = dial(t, x.a), dial(t, x.b), dial(t, x.c)
	return x
}

const syncTopic = "rmq_sys_SYNC_BROKER_MEMBER_broker-a"

// groupMember is broker-a's master (id 0) or slave as a 4.9.8 or 5.x Java
// broker registers it: the same topic table (slaves sync it from the
// master), including the acting-master member topic.
func groupMember(id int64, version int, queues int, counter int64) *rocketmqtest.Broker {
	return &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: id,
		Addr: fmt.Sprintf("10.0.0.%d:10911", id+1), HAAddr: fmt.Sprintf("10.0.0.%d:10912", id+1), Version: version,
		ActingMaster: version >= remoting.VersionStaticTopics,
		Topics: map[string]remoting.TopicConfig{"TopicTest": rocketmqtest.Topic("TopicTest", queues),
			"TBW102": rocketmqtest.Topic("TBW102", 8), syncTopic: rocketmqtest.Topic(syncTopic, 1)},
		DataVersion: remoting.DataVersion{Counter: counter, Timestamp: 1700000000000}}
}

// routeIs waits until the client's route of topic has exactly addrs and,
// for broker-a, perm and queue count.
func routeIs(t *testing.T, cl *rocketmqtest.Client, topic string, addrs map[int64]string, perm, queues int) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error {
		td := route(t, cl, topic)
		if td == nil {
			return fmt.Errorf("%s: no route (TOPIC_NOT_EXIST)", topic)
		}
		if len(td.BrokerDatas) != 1 || fmt.Sprint(td.BrokerDatas[0].BrokerAddrs) != fmt.Sprint(addrs) {
			return fmt.Errorf("%s: brokers %+v, want addrs %v", topic, td.BrokerDatas, addrs)
		}
		if q := td.QueueDatas[0]; q.Perm != perm || q.ReadQueueNums != queues || q.WriteQueueNums != queues {
			return fmt.Errorf("%s: queue data %+v, want perm %d and %d queues", topic, q, perm, queues)
		}
		return nil
	})
}

// Case 1: the master leaves (unregisters, or its agent dies with its host)
// and the group keeps its queue data for the slave, registered on another
// agent: consumers go on reading from the slave (4.x), and 5.x clears
// WRITE (acting master) and keeps the member-group topic brokers poll.
func TestMasterLeavesSlaveKeepsGroupQueuesAcrossAgents(t *testing.T) {
	for _, v := range []struct {
		name    string
		version int
		perm    int // after the master left
	}{{"4.9", 409, 6}, {"5.x", remoting.VersionCurrent, 4}} {
		for _, how := range []string{"unregister", "connection closed", "master's agent died"} {
			t.Run(v.name+"/"+how, func(t *testing.T) {
				testutil.CheckLeaks(t)
				x := startThree(t)
				m, s := groupMember(0, v.version, 8, 3), groupMember(1, v.version, 8, 3)
				register(t, x.master, m)
				register(t, x.slave, s)
				both := map[int64]string{0: m.Addr, 1: s.Addr}
				routeIs(t, x.q, "TopicTest", both, 6, 8)
				// The slave's agent holds the group's data too.
				testutil.Eventually(t, 5*time.Second, func() error {
					if n := len(x.regs[1].LocalRecords("queue/broker-a/")); n != 3 {
						return fmt.Errorf("slave's agent holds %d queue records of the group, want 3", n)
					}
					return nil
				})
				switch how {
				case "unregister":
					if err := x.master.Unregister(m); err != nil {
						t.Fatal(err)
					}
				case "connection closed":
					x.master.Close()
				case "master's agent died":
					x.a.Close()
					for _, r := range x.regs[1:] {
						r.Routes.DropOrigin("mq-3", 0)
					}
				}
				slaveOnly := map[int64]string{1: s.Addr}
				routeIs(t, x.q, "TopicTest", slaveOnly, v.perm, 8)
				routeIs(t, x.q, syncTopic, slaveOnly, v.perm, 1)
				// The group goes when its last member does.
				if err := x.slave.Unregister(s); err != nil {
					t.Fatal(err)
				}
				routeEventually(t, x.q, "TopicTest", gone)
			})
		}
	}
}

// Case 2: a 5.x prime slave served the group while the master was away
// (its own queue data, WRITE stripped, its older queue count); the master
// registers again, on another agent: routes give the master's perm and
// queue count, on every agent, and keep them.
func TestReturnedMasterOutranksPrimeSlaveData(t *testing.T) {
	testutil.CheckLeaks(t)
	x := startThree(t)
	s := groupMember(1, remoting.VersionCurrent, 4, 3)
	register(t, x.slave, s)
	slaveOnly := map[int64]string{1: s.Addr}
	routeIs(t, x.q, "TopicTest", slaveOnly, 4, 4)
	m := groupMember(0, remoting.VersionCurrent, 16, 4)
	register(t, x.master, m)
	both := map[int64]string{0: m.Addr, 1: s.Addr}
	for _, cl := range []*rocketmqtest.Client{x.q, x.slave, x.master} {
		routeIs(t, cl, "TopicTest", both, 6, 16)
	}
	// The slave's agent follows: its data is now a copy of the master's.
	testutil.Eventually(t, 5*time.Second, func() error {
		for _, r := range x.regs[1].LocalRecords("queue/broker-a/TopicTest") {
			if q := r.Queue; !q.Copy || q.From != 0 || q.ReadQueueNums != 16 || q.Perm != 6 {
				return fmt.Errorf("slave's agent holds %+v", *q)
			}
		}
		return nil
	})
	// The slave's periodic re-registrations change nothing.
	register(t, x.slave, s)
	routeIs(t, x.q, "TopicTest", both, 6, 16)
	// Master gone again: the master's data, WRITE cleared.
	if err := x.master.Unregister(m); err != nil {
		t.Fatal(err)
	}
	routeIs(t, x.q, "TopicTest", slaveOnly, 4, 16)
}

// Case 3: controller mode. A master with a lower stateVersion on one agent
// cannot shadow the new master on another, whichever registered first,
// and is fenced over the whole table when it registers again.
func TestFencingOverTheWholeCluster(t *testing.T) {
	for _, staleFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("stale first ", staleFirst), func(t *testing.T) {
			testutil.CheckLeaks(t)
			regs := hosttest.Cluster("mq-1", "mq-3", "mq-2") // stale master's agent sorts first
			a, b, c := startServer(t, regs[0]), startServer(t, regs[1]), startServer(t, regs[2])
			staleCl, newCl, q := dial(t, a), dial(t, b), dial(t, c)
			stale := groupMember(0, remoting.VersionCurrent, 8, 5)
			stale.Addr = "10.0.0.7:10911"
			stale.DataVersion.StateVersion = 1
			fresh := groupMember(0, remoting.VersionCurrent, 8, 5)
			fresh.Addr = "10.0.0.8:10911"
			fresh.DataVersion.StateVersion = 2
			if staleFirst {
				register(t, staleCl, stale)
				register(t, newCl, fresh)
			} else {
				register(t, newCl, fresh)
				register(t, staleCl, stale)
			}
			routeIs(t, q, "TopicTest", map[int64]string{0: fresh.Addr}, 6, 8)
			// The stale master registers again: fenced, and its record goes.
			register(t, staleCl, stale)
			testutil.Eventually(t, 5*time.Second, func() error {
				if n := len(regs[0].LocalRecords("broker/")); n != 0 {
					return fmt.Errorf("the fenced master's agent still holds %d broker records", n)
				}
				return nil
			})
			routeIs(t, q, "TopicTest", map[int64]string{0: fresh.Addr}, 6, 8)
		})
	}
}

// A DLedger broker registers as brokerId -1 before its election; Java
// stores any long, so it is registered (no SYSTEM_ERROR) and listed under
// -1 on every agent.
func TestDLedgerBrokerIDMinusOneIsStored(t *testing.T) {
	testutil.CheckLeaks(t)
	x := startThree(t)
	b := groupMember(-1, remoting.VersionCurrent, 8, 1)
	b.Addr = "10.0.0.9:10911"
	wantCode(t, register(t, x.master, b), remoting.Success, "")
	want := `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{-1:"10.0.0.9:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":true}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	testutil.Eventually(t, 5*time.Second, func() error {
		if got := string(do(t, x.q, remoting.GetBrokerClusterInfo, nil, nil).Body); got != want {
			return fmt.Errorf("106 on another agent\n got %s\nwant %s", got, want)
		}
		return nil
	})
}

// A group's zoneName and enableActingMaster are those of its latest
// registration (Java overwrites them on each one), whichever member and
// agent it came through, not those of the lowest broker id.
func TestGroupAttributesFromLatestRegistration(t *testing.T) {
	testutil.CheckLeaks(t)
	x := startThree(t)
	m, s := groupMember(0, remoting.VersionCurrent, 8, 1), groupMember(1, remoting.VersionCurrent, 8, 1)
	attrs := func(zone string, acting bool) {
		t.Helper()
		testutil.Eventually(t, 5*time.Second, func() error {
			for _, cl := range []*rocketmqtest.Client{x.master, x.slave, x.q} {
				td := route(t, cl, "TopicTest")
				if td == nil || len(td.BrokerDatas) != 1 {
					return fmt.Errorf("route %+v", td)
				}
				if bd := td.BrokerDatas[0]; bd.ZoneName != zone || bd.EnableActingMaster != acting {
					return fmt.Errorf("group zone %q acting %v, want %q %v", bd.ZoneName, bd.EnableActingMaster, zone, acting)
				}
			}
			return nil
		})
	}
	m.Zone, m.ActingMaster = "zone-1", false
	register(t, x.master, m)
	attrs("zone-1", false)
	// The slave registers later, on another agent: its attributes win.
	s.Zone, s.ActingMaster = "zone-2", true
	register(t, x.slave, s)
	attrs("zone-2", true)
	// The master's next registration with new content wins back.
	m.Zone = "zone-3"
	register(t, x.master, m)
	attrs("zone-3", false)
}

// Java returns the filter servers each routed broker registered, keyed by
// its address, and forgets them when a registration lists none.
func TestFilterServerTable(t *testing.T) {
	testutil.CheckLeaks(t)
	x := startThree(t)
	m, s := groupMember(0, 409, 8, 1), groupMember(1, 409, 8, 1)
	m.FilterServers = []string{"10.0.0.1:40001", "10.0.0.1:40002"}
	register(t, x.master, m)
	register(t, x.slave, s)
	filters := func(want string) {
		t.Helper()
		testutil.Eventually(t, 5*time.Second, func() error {
			td := route(t, x.q, "TopicTest")
			if td == nil || len(td.BrokerDatas) != 1 || len(td.BrokerDatas[0].BrokerAddrs) != 2 {
				return fmt.Errorf("route %+v", td)
			}
			if got := fmt.Sprint(td.FilterServerTable); got != want {
				return fmt.Errorf("filterServerTable %s, want %s", got, want)
			}
			return nil
		})
	}
	filters("map[10.0.0.1:10911:[10.0.0.1:40001 10.0.0.1:40002]]")
	m.FilterServers = nil
	register(t, x.master, m)
	filters("map[]")
	for _, bad := range [][]string{{"bad,addr"}, slices.Repeat([]string{"10.0.0.1:40001"}, maxFilterServers+1)} {
		m.FilterServers = bad
		if resp, err := x.master.Register(m); resp == nil || resp.Code != remoting.SystemError {
			t.Fatalf("filter servers %q: %v %v", bad, resp, err)
		}
	}
	filters("map[]")
}
