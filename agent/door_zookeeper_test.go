package agent_test

import (
	"net"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

// A taken ZooKeeper port stops the agent with a message naming the port
// and the way out; "off" starts no listener.
func TestZooKeeperPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := agent.DefaultConfig()
	cfg.NodeName = "zk-port"
	cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "127.0.0.1:0", "127.0.0.1:0", "off", ln.Addr().String(), "off"
	cfg.ConsulAddr = "off"
	cfg.DNSAddr = "off"
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Start(t.Context())
	if err == nil {
		a.Shutdown()
		t.Fatal("agent started on a taken ZooKeeper port")
	}
	for _, want := range []string{ln.Addr().String(), "--zookeeper off", "--zookeeper HOST:PORT"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}

	off := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.ZooKeeperAddr = "off" })
	if got := off.Agent(0).Addr("zookeeper"); got != "" {
		t.Fatalf(`ZooKeeperAddr with "off" = %q`, got)
	}
}
