package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
)

// Every agent serves the newest live registration's content (issue 41,
// items 1-3): the queue data and the address of one registration, never
// the address of one and the queues of another, whichever agent's name
// sorts first and whatever DataVersion counter a stale copy carries.

// contentCluster is three agents over the in-memory network: agent-0 and
// agent-1 take registrations, agent-2 only reads.
func contentCluster(t *testing.T) *agenttest.Cluster {
	t.Helper()
	net := gossiptest.NewNetwork(1)
	t.Cleanup(net.Close)
	return agenttest.Start(t, 3, agenttest.WithNetwork(net))
}

// dialRMQ connects to agent i's RocketMQ door; the test's cleanup closes it.
func dialRMQ(t *testing.T, c *agenttest.Cluster, i int) *rocketmqtest.Client {
	t.Helper()
	cl, err := rocketmqtest.Dial(c.Agent(i).Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// javaBroker is broker "content" as a Java broker registers it: topic
// Content with queues queues, under DataVersion counter counter.
func javaBroker(id int64, addr string, queues int, counter int64) *rocketmqtest.Broker {
	return &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "content", ID: id, Addr: addr,
		HAAddr: addr[:len(addr)-1] + "2", Topics: map[string]remoting.TopicConfig{
			"Content": rocketmqtest.Topic("Content", queues), "TBW102": rocketmqtest.Topic("TBW102", 8)},
		DataVersion: remoting.DataVersion{Counter: counter, Timestamp: 1700000000000 + counter}}
}

// rmqServes waits until every agent of c answers GET_ROUTEINFO_BY_TOPIC
// for topic Content, over its RocketMQ door, with exactly addrs and the
// queue count queues, and returns how long the slowest took.
func rmqServes(t *testing.T, c *agenttest.Cluster, addrs map[int64]string, queues int) time.Duration {
	t.Helper()
	start := time.Now()
	clients := make([]*rocketmqtest.Client, c.Len())
	for i := range clients {
		clients[i] = dialRMQ(t, c, i)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for i, cl := range clients {
			resp, err := cl.Route("Content", remoting.VersionCurrent)
			if err != nil {
				return fmt.Errorf("agent-%d: %v", i, err)
			}
			if resp.Code != remoting.Success {
				return fmt.Errorf("agent-%d: no route (code %d)", i, resp.Code)
			}
			var td remoting.TopicRouteData
			if err := remoting.Unmarshal(resp.Body, &td); err != nil {
				return fmt.Errorf("agent-%d: %v", i, err)
			}
			if len(td.BrokerDatas) != 1 || len(td.QueueDatas) != 1 {
				return fmt.Errorf("agent-%d: route %+v", i, td)
			}
			if got := td.BrokerDatas[0].BrokerAddrs; fmt.Sprint(got) != fmt.Sprint(addrs) {
				return fmt.Errorf("agent-%d serves addresses %v, want %v", i, got, addrs)
			}
			if q := td.QueueDatas[0]; q.ReadQueueNums != queues || q.WriteQueueNums != queues {
				return fmt.Errorf("agent-%d serves %d/%d queues, want %d/%d", i, q.ReadQueueNums, q.WriteQueueNums, queues, queues)
			}
		}
		return nil
	})
	return time.Since(start)
}

func mustRegister(t *testing.T, cl *rocketmqtest.Client, b *rocketmqtest.Broker) {
	t.Helper()
	if _, err := cl.Register(b); err != nil {
		t.Fatal(err)
	}
}

// Item 1: a master comes back with a fresh store (DataVersion counter 3,
// its topic at 8 queues) while its slave, on another agent, lives on with
// the old counter 50: Java rewrites the queue data on the master's first
// registration (and on any DataVersion that differs from the address's
// last), so every agent must serve 8, the master's own agent included.
// Before, the slave agent's copy of the old data (counter 50) outranked
// the master's registration everywhere.
func TestMasterFreshStoreOutranksSlaveCopy(t *testing.T) {
	for _, how := range []string{"new connection", "same connection"} {
		t.Run(how, func(t *testing.T) {
			testutil.CheckLeaks(t)
			c := contentCluster(t)
			m, s := javaBroker(0, "10.41.0.1:10911", 4, 50), javaBroker(1, "10.41.0.2:10911", 4, 50)
			master, slave := dialRMQ(t, c, 0), dialRMQ(t, c, 1)
			mustRegister(t, master, m)
			mustRegister(t, slave, s)
			both := map[int64]string{0: m.Addr, 1: s.Addr}
			rmqServes(t, c, both, 4)
			// The slave's agent holds its copy of the group's data before
			// the master goes.
			testutil.Eventually(t, 5*time.Second, func() error {
				if n := len(c.Agent(1).Table().LocalRecords("queue/content/")); n != 2 {
					return fmt.Errorf("slave's agent holds %d queue records, want 2", n)
				}
				return nil
			})
			if how == "new connection" {
				master.Close() // the master process exits...
				rmqServes(t, c, map[int64]string{1: s.Addr}, 4)
				master = dialRMQ(t, c, 0) // ...and starts again
			}
			fresh := javaBroker(0, m.Addr, 8, 3)
			mustRegister(t, master, fresh)
			took := rmqServes(t, c, both, 8)
			t.Logf("every agent served the master's fresh queue data %v after its registration", took)
			// The slave's re-registrations (old counter) change nothing.
			mustRegister(t, slave, s)
			mustRegister(t, master, fresh)
			rmqServes(t, c, both, 8)
		})
	}
}

// Item 1: a broker that moves to another host (a new address on another
// agent) with a lower counter is served with its new queue data at once,
// not when its old registration expires.
func TestMovedBrokerServedWithItsNewQueues(t *testing.T) {
	testutil.CheckLeaks(t)
	c := contentCluster(t)
	old, moved := javaBroker(0, "10.41.0.1:10911", 4, 50), javaBroker(0, "10.41.0.9:10911", 8, 3)
	mustRegister(t, dialRMQ(t, c, 1), old) // its connection stays open: held until it expires
	rmqServes(t, c, map[int64]string{0: old.Addr}, 4)
	mustRegister(t, dialRMQ(t, c, 0), moved)
	took := rmqServes(t, c, map[int64]string{0: moved.Addr}, 8)
	t.Logf("every agent served the moved broker's queue data %v after its registration", took)
}

// httpServes waits until every agent of c serves topic Content over HTTP
// with master address addr and queue count queues.
func httpServes(t *testing.T, c *agenttest.Cluster, addr string, queues int) {
	t.Helper()
	everywhere(t, c, 10*time.Second, func(h string) error {
		var r route
		if status, _ := call(t, "GET", h, "/v1/topics/Content", nil, &r); status != http.StatusOK {
			return fmt.Errorf("GET /v1/topics/Content: %d", status)
		}
		if len(r.BrokerDatas) != 1 || len(r.QueueDatas) != 1 {
			return fmt.Errorf("route %+v", r)
		}
		if got := r.BrokerDatas[0].BrokerAddrs["0"]; got != addr {
			return fmt.Errorf("serves address %q, want %q", got, addr)
		}
		if got := r.QueueDatas[0]["readQueueNums"]; got != float64(queues) {
			return fmt.Errorf("serves %v queues, want %d", got, queues)
		}
		return nil
	})
}

func httpBroker(addr string, queues int) map[string]any {
	return map[string]any{"cluster": "DefaultCluster", "brokerName": "content", "brokerId": 0, "addr": addr, "ttl": "5m",
		"topics": map[string]any{"Content": map[string]int{"readQueueNums": queues, "writeQueueNums": queues, "perm": 6}}}
}

// Item 2: one broker registered over HTTP on one agent, then on another
// (a new address and queue count): every agent serves the newer
// registration's address and queues, whichever agent's name sorts first.
// Before, the queue data came from the lower-named agent.
func TestNewestHTTPBrokerRegistrationContentServed(t *testing.T) {
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		t.Run(fmt.Sprintf("agent-%d then agent-%d", order[0], order[1]), func(t *testing.T) {
			testutil.CheckLeaks(t)
			c := contentCluster(t)
			put := func(i int, addr string, queues int) {
				t.Helper()
				if status, _ := call(t, "PUT", c.Agent(i).HTTPAddr(), "/v1/brokers", httpBroker(addr, queues), nil); status != http.StatusOK {
					t.Fatalf("PUT on agent-%d: %d", i, status)
				}
			}
			put(order[0], "10.41.1.1:10911", 4)
			httpServes(t, c, "10.41.1.1:10911", 4)
			put(order[1], "10.41.1.2:10911", 8)
			httpServes(t, c, "10.41.1.2:10911", 8)
			// Back to the first agent, with the first's content: newest again.
			put(order[0], "10.41.1.1:10911", 4)
			httpServes(t, c, "10.41.1.1:10911", 4)
		})
	}
}
