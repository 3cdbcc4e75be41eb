package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

func TestMain(m *testing.M) {
	rlog.SetLogger(rebalances) // before any client starts: rlog's logger is an unguarded global
	os.Exit(m.Run())
}

// nameServer is agent i's RocketMQ address: the agent serves it itself.
func nameServer(t *testing.T, c *agenttest.Cluster, i int) string {
	t.Helper()
	addr := c.Agent(i).Addr("rocketmq")
	if addr == "" {
		t.Fatalf("agent %d serves no RocketMQ door", i)
	}
	return addr
}

// publishQueues asks through a fresh admin client: an admin caches every
// route it fetched, forever.
func publishQueues(nameServer, topic string) ([]*primitive.MessageQueue, error) {
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{nameServer})))
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return adm.FetchPublishMessageQueues(ctx, topic)
}

func wantQueues(nameServer, topic, broker string, n int) func() error {
	return func() error {
		qs, err := publishQueues(nameServer, topic)
		if err != nil {
			return err
		}
		if len(qs) != n {
			return fmt.Errorf("%d writable queues of %s, want %d: %v", len(qs), topic, n, qs)
		}
		for _, q := range qs {
			if q.BrokerName != broker {
				return fmt.Errorf("queue on %s, want %s", q.BrokerName, broker)
			}
		}
		return nil
	}
}

func wantTopicNotExist(nameServer, topic string) func() error {
	return func() error {
		if _, err := publishQueues(nameServer, topic); !errors.Is(err, rmqerrors.ErrTopicNotExist) {
			return fmt.Errorf("want ErrTopicNotExist for %s, got %v", topic, err)
		}
		return nil
	}
}

func demoBroker(t *testing.T, name, topic string, version int, compressed bool) *rocketmqtest.Broker {
	addr, err := unusedLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	return &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: name, Addr: addr, Version: version, Compressed: compressed,
		DataVersion: remoting.DataVersion{Counter: 1, Timestamp: 1700000000000},
		Topics:      map[string]remoting.TopicConfig{topic: rocketmqtest.Topic(topic, 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
}

func dialNS(t *testing.T, addr string) *rocketmqtest.Client {
	t.Helper()
	c, err := rocketmqtest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The real Go client, pointed at agent C, sees and loses brokers that
// register on agent A over the RocketMQ protocol.
func TestGoClientThroughAnotherAgent(t *testing.T) {
	c := agenttest.Start(t, 3)
	nsA, nsC := nameServer(t, c, 0), nameServer(t, c, 2)
	const topic = "InteropTopic"
	b := demoBroker(t, "broker-a", topic, remoting.VersionCurrent, false)
	brokerConn := dialNS(t, nsA)
	if _, err := brokerConn.Register(b); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, "broker-a", 4))

	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{nsC})))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := adm.FetchAllTopicList(context.Background())
	adm.Close()
	if err != nil || !slices.Contains(tl.TopicList, topic) {
		t.Fatalf("FetchAllTopicList via C: %+v, %v", tl, err)
	}

	const group = "interop-group"
	pc, err := rocketmq.NewPushConsumer(consumer.WithGroupName(group),
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{nsC})),
		consumer.WithInstance("interop-"+t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}, func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		return consumer.ConsumeSuccess, nil
	}); err != nil {
		t.Fatal(err)
	}
	rebalances.mark(group)
	if err := pc.Start(); err != nil {
		t.Fatalf("push consumer Start via C: %v", err)
	}
	rebalances.waitStartupRebalance(t, group, topic)
	if err := pc.Shutdown(); err != nil {
		t.Fatal(err)
	}

	// (docs/protocols/rocketmq-remoting.md §5.6) sent to C, as `mqadmin wipeWritePerm -n C` would: producers get
	// no writable queue; the broker's re-registration on A keeps it so;
	// addWritePerm brings the queues back.
	admin := dialNS(t, nsC)
	if resp, err := admin.Do(remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil); err != nil || resp.Code != 0 {
		t.Fatalf("wipe: %v %v", resp, err)
	}
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, "broker-a", 0))
	if _, err := brokerConn.Register(b); err != nil {
		t.Fatal(err)
	}
	if err := wantQueues(nsA, topic, "broker-a", 0)(); err != nil {
		t.Fatalf("re-registration undid the wipe: %v", err)
	}
	if resp, err := admin.Do(remoting.AddWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil); err != nil || resp.Code != 0 {
		t.Fatalf("add: %v %v", resp, err)
	}
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, "broker-a", 4))

	// Broker shutdown: UNREGISTER_BROKER on A.
	if err := brokerConn.Unregister(b); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, wantTopicNotExist(nsC, topic))

	// A killed 4.9 broker (compressed registration): its connection closes.
	old := demoBroker(t, "broker-b", "OldTopic", 409, true)
	oldConn := dialNS(t, nsA)
	if _, err := oldConn.Register(old); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, "OldTopic", "broker-b", 4))
	oldConn.Close()
	testutil.Eventually(t, 10*time.Second, wantTopicNotExist(nsC, "OldTopic"))
}

// The example program runs against an agent cluster as a user would run it.
func TestExampleProgram(t *testing.T) {
	c := agenttest.Start(t, 2)
	ns := nameServer(t, c, 1)
	broker, err := registerDemoBroker(nameServer(t, c, 0), "ExampleTopic")
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	testutil.Eventually(t, 10*time.Second, wantQueues(ns, "ExampleTopic", "demo-broker", 4))
	rebalances.mark(consumerGroup)
	pc, err := useClient(ns, "ExampleTopic")
	if err != nil {
		t.Fatal(err)
	}
	rebalances.waitStartupRebalance(t, consumerGroup, "ExampleTopic")
	if err := pc.Shutdown(); err != nil {
		t.Fatal(err)
	}
}
