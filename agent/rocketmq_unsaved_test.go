package agent_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// Over the RocketMQ door, a change the data dir cannot save is answered
// SYSTEM_ERROR naming the cause and changes nothing anywhere: a new
// broker's or a re-registration's records are not served here nor
// gossiped to the other agent, and an unregistration that cannot be saved
// is not acknowledged (the broker stays). Before, the records were applied
// first (and gossiped) and stayed after the SYSTEM_ERROR, and the
// unregistration answered SUCCESS (issue 24).
func TestRocketMQChangeThatCannotBeSavedChangesNothing(t *testing.T) {
	c := agenttest.Start(t, 2, agenttest.WithDataDirs(t.TempDir()))
	a, peer := c.Agent(0), c.Agent(1)
	cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	brokerA := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-a", Addr: "10.7.0.1:10911",
		Topics: map[string]remoting.TopicConfig{"Kept": rocketmqtest.Topic("Kept", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	if _, err := cl.Register(brokerA); err != nil {
		t.Fatal(err)
	}
	heal := agent.BreakLeaseLog(a)
	defer func() {
		if heal != nil {
			heal()
		}
	}()
	unsaved := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "code 1 ") || !strings.Contains(err.Error(), "data dir") {
			t.Fatalf("%s that cannot be saved answered %v, want SYSTEM_ERROR naming the data dir", what, err)
		}
	}
	brokerB := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-b", Addr: "10.7.0.2:10911",
		Topics: map[string]remoting.TopicConfig{"NewBroker": rocketmqtest.Topic("NewBroker", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	_, err = cl.Register(brokerB)
	unsaved("a new broker's registration", err)
	brokerA.Topics["NewTopic"] = rocketmqtest.Topic("NewTopic", 4)
	brokerA.DataVersion.Counter++
	_, err = cl.Register(brokerA)
	unsaved("a re-registration with a new topic", err)
	unsaved("an unregistration", cl.Unregister(brokerA))
	for _, topic := range []string{"NewBroker", "NewTopic"} {
		if _, ok := a.Table().TopicRoute(topic); ok {
			t.Fatalf("the agent serves %s, registered by a change it could not save", topic)
		}
	}
	if _, ok := a.Table().TopicRoute("Kept"); !ok {
		t.Fatal("an unregistration that could not be saved withdrew the broker")
	}

	// Gossip keeps our changes in order: once the peer has a change made
	// after the refused ones, it would have had them too.
	heal()
	heal = nil
	brokerC := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-c", Addr: "10.7.0.3:10911",
		Topics: map[string]remoting.TopicConfig{"After": rocketmqtest.Topic("After", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	if _, err := cl.Register(brokerC); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if _, ok := peer.Table().TopicRoute("After"); !ok {
			return errors.New("the peer has not learned broker-c yet")
		}
		return nil
	})
	for _, topic := range []string{"NewBroker", "NewTopic"} {
		if _, ok := peer.Table().TopicRoute(topic); ok {
			t.Fatalf("the peer serves %s, gossiped from a change that could not be saved", topic)
		}
	}
	if _, ok := peer.Table().TopicRoute("Kept"); !ok {
		t.Fatal("the peer lost broker-a")
	}
}

// A broker's connection closing is a withdrawal nobody can refuse: the
// broker let go, so its records go at once even when the data dir cannot
// save the removal, and the removal is saved as soon as the disk takes
// writes again. Until then a restart restores the lease only as any
// restored lease is: until its deadline (the broker's last heartbeat plus
// its timeout), unless the broker registers again. Before, the records
// stayed registered and served after the close for as long as the disk
// refused writes, past the broker's timeout.
func TestRocketMQCloseThatCannotBeSavedWithdrawsAndSavesLater(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	b := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-gone", Addr: "10.7.1.1:10911",
		Topics: map[string]remoting.TopicConfig{"Closing": rocketmqtest.Topic("Closing", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	if _, err := cl.Register(b); err != nil {
		t.Fatal(err)
	}
	saved := func() (bool, error) {
		leases, err := agent.SavedLeases(filepath.Join(dir, "agent-0"))
		if err != nil {
			return false, err
		}
		for id := range leases {
			if strings.Contains(id, b.Addr) {
				return true, nil
			}
		}
		return false, nil
	}
	heal := agent.BreakLeaseLog(a)
	cl.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		if _, ok := a.Table().TopicRoute("Closing"); ok {
			return errors.New("the broker is still served after its connection closed")
		}
		return nil
	})
	if in, err := saved(); err != nil || !in {
		t.Fatalf("with the disk refusing writes, the lease left the files (%v, %v)", in, err)
	}
	heal()
	testutil.Eventually(t, 10*time.Second, func() error {
		in, err := saved()
		if err != nil {
			return err
		}
		if in {
			return fmt.Errorf("the closed broker's lease is still saved once the disk takes writes")
		}
		return nil
	})
}
