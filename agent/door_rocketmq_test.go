package agent_test

import (
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
)

// The agent serves the RocketMQ NameServer protocol on its configured
// address, and not at all with "off".
func TestRocketMQDoor(t *testing.T) {
	c := agenttest.Start(t, 1)
	addr := c.Agent(0).Addr("rocketmq")
	if addr == "" {
		t.Fatal("agent started without its RocketMQ listener")
	}
	cl, err := rocketmqtest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := cl.Route("NoSuchTopic", remoting.VersionGoClient)
	if err != nil || resp.Code != remoting.TopicNotExist {
		t.Fatalf("route query to a lone agent: %v %v", resp, err)
	}

	off := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.RocketMQAddr = "off" })
	if got := off.Agent(0).Addr("rocketmq"); got != "" {
		t.Fatalf(`RocketMQAddr with "off" = %q`, got)
	}
}

// The agent's config bounds the RocketMQ door's connections: with
// rocketmq_max_conns_per_ip 1 a second connection from loopback is closed
// unanswered.
func TestDoorConnectionBoundsFromConfig(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.RocketMQMaxConnsPerIP = 1 })
	addr := c.Agent(0).Addr("rocketmq")
	first, err := rocketmqtest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if resp, err := first.Route("NoSuchTopic", remoting.VersionGoClient); err != nil || resp.Code != remoting.TopicNotExist {
		t.Fatalf("the first connection: %v %v", resp, err)
	}
	second, err := rocketmqtest.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if resp, err := second.Route("NoSuchTopic", remoting.VersionGoClient); err == nil {
		t.Fatalf("a second connection from 127.0.0.1 past rocketmq_max_conns_per_ip 1 was answered: code %d", resp.Code)
	}
}
