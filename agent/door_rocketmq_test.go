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
	addr := c.Agent(0).RocketMQAddr()
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
	if got := off.Agent(0).RocketMQAddr(); got != "" {
		t.Fatalf(`RocketMQAddr with "off" = %q`, got)
	}
}
