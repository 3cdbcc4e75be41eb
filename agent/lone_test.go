package agent

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/gossip/gossiptest"
)

// startLone starts one agent whose gossip runs over an in-memory network
// (so a join to any address stays in the process) and whose HTTP API
// listens on a free loopback port, its config changed by edits. The
// test's cleanup stops it.
func startLone(t testing.TB, edits ...func(*Config)) *Agent {
	t.Helper()
	net := gossiptest.NewNetwork(1)
	cfg := DefaultConfig()
	cfg.NodeName = "lone"
	cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "127.0.0.1:0", "127.0.0.1:0", "off", "off", "off"
	cfg.ConsulAddr = "off"
	cfg.DNSAddr = "off"
	cfg.Profile = "local"
	cfg.LeaveTimeout = Duration(time.Second)
	cfg.TuneMemberlist = func(mc *memberlist.Config) { mc.Transport = net.NewTransport(cfg.NodeName) }
	for _, edit := range edits {
		edit(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = a.Shutdown()
		net.Close()
	})
	return a
}
