package main

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// A 4.9 master registers on agent A, its slave on agent B; the real Go
// client asks agent C. After the master leaves, a consumer still gets the
// group's queues and reads from the slave's address (before namecast kept
// a group's queue data per agent, the topic did not exist any more); after
// the master returns with more queues, publishers get the master's perm
// and queue count.
func TestGoClientReadsFromSlaveAfterMasterLeaves(t *testing.T) {
	c := agenttest.Start(t, 3)
	nsA, nsB, nsC := nameServer(t, c, 0), nameServer(t, c, 1), nameServer(t, c, 2)
	const topic = "GroupTopic"
	slaveLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer slaveLn.Close()
	dialed := make(chan struct{}, 1)
	go func() {
		for {
			conn, err := slaveLn.Accept()
			if err != nil {
				return
			}
			select {
			case dialed <- struct{}{}:
			default:
			}
			defer conn.Close() // held open: the pull just waits
		}
	}()
	master := demoBroker(t, "broker-g", topic, 409, false)
	master.Topics[topic] = rocketmqtest.Topic(topic, 4)
	slave := demoBroker(t, "broker-g", topic, 409, false)
	slave.ID, slave.Addr = 1, slaveLn.Addr().String()
	masterConn, slaveConn := dialNS(t, nsA), dialNS(t, nsB)
	if _, err := masterConn.Register(master); err != nil {
		t.Fatal(err)
	}
	if _, err := slaveConn.Register(slave); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, "broker-g", 4))
	// The slave's agent keeps a copy of the group's queue data (groups.go);
	// give it the moment it takes before the master goes.
	testutil.Eventually(t, 10*time.Second, func() error { return hasQueueCopy(c, 1, "broker-g", topic) })

	if err := masterConn.Unregister(master); err != nil {
		t.Fatal(err)
	}
	// No master: nothing to publish to, but the topic is there to consume.
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, "broker-g", 0))

	pc, err := rocketmq.NewPullConsumer(consumer.WithGroupName("group-slave-read"),
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{nsC})),
		consumer.WithInstance("group-"+t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}); err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatalf("pull consumer Start via C after the master left: %v", err)
	}
	defer pc.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	go pc.Pull(ctx, 1) // the slave never answers; the dial is what counts
	select {
	case <-dialed:
	case <-time.After(10 * time.Second):
		t.Fatal("the consumer never contacted the slave's address")
	}

	// The master returns, with 16 queues: its perm and count win.
	master.Topics[topic] = rocketmqtest.Topic(topic, 16)
	master.DataVersion = remoting.DataVersion{Counter: 2, Timestamp: 1700000000001}
	if _, err := masterConn.Register(master); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, "broker-g", 16))
	testutil.Eventually(t, 10*time.Second, wantQueues(nsB, topic, "broker-g", 16))
}

// hasQueueCopy checks that agent i holds its own record of the group's
// queue data for topic.
func hasQueueCopy(c *agenttest.Cluster, i int, broker, topic string) error {
	for _, r := range c.Agent(i).Table().LocalRecords("queue/" + broker + "/" + topic) {
		if r.Queue != nil {
			return nil
		}
	}
	return errors.New("the slave's agent holds no copy of the group's queue data yet")
}
