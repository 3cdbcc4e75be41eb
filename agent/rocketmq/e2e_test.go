package rocketmq_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// nameServer is agent i's RocketMQ address: the agent serves it itself.
func nameServer(t *testing.T, c *agenttest.Cluster, i int) string {
	t.Helper()
	addr := c.Agent(i).Addr("rocketmq")
	if addr == "" {
		t.Fatalf("agent %d serves no RocketMQ door", i)
	}
	return addr
}

func dialAgent(t *testing.T, addr string) *rocketmqtest.Client {
	t.Helper()
	cl, err := rocketmqtest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// routeOn decodes topic's route from a client; nil if not SUCCESS.
func routeOn(cl *rocketmqtest.Client, topic string, version int) (*remoting.TopicRouteData, *remoting.Command, error) {
	resp, err := cl.Route(topic, version)
	if err != nil || resp.Code != remoting.Success {
		return nil, resp, err
	}
	var td remoting.TopicRouteData
	return &td, resp, remoting.Unmarshal(resp.Body, &td)
}

// javaBrokers are the registrations of the four shapes brokers send: 4.9
// and 5.x, each with the JSON and the zlib body.
func javaBrokers() []*rocketmqtest.Broker {
	var out []*rocketmqtest.Broker
	for i, form := range []struct {
		version    int
		compressed bool
	}{{409, false}, {409, true}, {479, false}, {479, true}} {
		name := fmt.Sprintf("broker-%d", i)
		topic := fmt.Sprintf("Topic%d", i)
		out = append(out, &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: name, Addr: fmt.Sprintf("127.0.0.%d:10911", i+10),
			HAAddr: fmt.Sprintf("127.0.0.%d:10912", i+10), Version: form.version, Compressed: form.compressed,
			DataVersion: remoting.DataVersion{Counter: 3, Timestamp: 1700000000000},
			Topics: map[string]remoting.TopicConfig{topic: rocketmqtest.Topic(topic, 4), "TBW102": rocketmqtest.Topic("TBW102", 8),
				name: rocketmqtest.Topic(name, 1)}})
	}
	return out
}

// A broker registering on agent A through the remoting port is served by
// agent C's remoting port; unregistration and a closed connection withdraw
// it there; mqadmin's wipe sent to C reaches the broker's records on A.
func TestClusterEndToEnd(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	nsA, nsC := nameServer(t, c, 0), nameServer(t, c, 2)
	admin := dialAgent(t, nsC)
	brokers := javaBrokers()
	conns := make([]*rocketmqtest.Client, len(brokers))
	for i, b := range brokers {
		conns[i] = dialAgent(t, nsA)
		if _, err := conns[i].Register(b); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for i, b := range brokers {
			for _, v := range []int{remoting.VersionGoClient, remoting.VersionCurrent} {
				td, resp, err := routeOn(admin, fmt.Sprintf("Topic%d", i), v)
				if err != nil || td == nil {
					return fmt.Errorf("Topic%d on agent C (version %d): %v %v", i, v, resp, err)
				}
				if td.BrokerDatas[0].BrokerAddrs[0] != b.Addr || td.QueueDatas[0].WriteQueueNums != 4 {
					return fmt.Errorf("Topic%d: %s", i, resp.Body)
				}
			}
		}
		return nil
	})

	resp, err := admin.Do(remoting.GetBrokerClusterInfo, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ci remoting.ClusterInfo
	if err := remoting.Unmarshal(resp.Body, &ci); err != nil || len(ci.ClusterAddrTable["DefaultCluster"]) != 4 {
		t.Fatalf("106 on C: %s (%v)", resp.Body, err)
	}
	resp, _ = admin.Do(remoting.GetAllTopicListFromNameServer, nil, nil)
	var tl remoting.TopicList
	if err := json.Unmarshal(resp.Body, &tl); err != nil || !slices.Contains(tl.Topics, "Topic3") || !slices.Contains(tl.Topics, "TBW102") {
		t.Fatalf("206 on C: %s (%v)", resp.Body, err)
	}

	// Shutdown path: UNREGISTER_BROKER on A withdraws broker-0 on C.
	if err := conns[0].Unregister(brokers[0]); err != nil {
		t.Fatal(err)
	}
	// A killed broker: its connection to A closes.
	conns[1].Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, topic := range []string{"Topic0", "Topic1"} {
			if td, _, _ := routeOn(admin, topic, remoting.VersionCurrent); td != nil {
				return fmt.Errorf("%s still routed on C", topic)
			}
		}
		return nil
	})
	if td, _, _ := routeOn(admin, "TBW102", remoting.VersionCurrent); td == nil || len(td.BrokerDatas) != 2 {
		t.Fatalf("TBW102 on C after two brokers left: %+v", td)
	}

	// mqadmin wipeWritePerm -n C: broker-2's records live on A.
	resp, err = admin.Do(remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-2"}, nil)
	if err != nil || resp.ExtFields["wipeTopicCount"] != "3" {
		t.Fatalf("wipe on C: %v %v", resp, err)
	}
	perm := func(cl *rocketmqtest.Client) int {
		td, _, _ := routeOn(cl, "Topic2", remoting.VersionCurrent)
		if td == nil {
			return -1
		}
		return td.QueueDatas[0].Perm
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if p := perm(admin); p != 4 {
			return fmt.Errorf("Topic2 perm on C is %d", p)
		}
		return nil
	})
	// The broker's next periodic registration leaves the wipe in force.
	if _, err := conns[2].Register(brokers[2]); err != nil {
		t.Fatal(err)
	}
	if p := perm(dialAgent(t, nsA)); p != 4 {
		t.Fatalf("re-registration undid the wipe: perm %d on A", p)
	}
}
