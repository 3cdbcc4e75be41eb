package nacos

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/internal/testutil"
)

// freeNacosAddr finds a loopback HTTP port whose gRPC port (+1000) is
// free too, so that an agent restarted on it is where its clients
// reconnect.
func freeNacosAddr(t *testing.T) string {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if port+1000 > 65535 {
			continue
		}
		g, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1000))
		if err != nil {
			continue
		}
		g.Close()
		return "127.0.0.1:" + strconv.Itoa(port)
	}
	t.Skip("no free port pair 1000 apart")
	return ""
}

// An agent restarted with its data dir under a live nacos-sdk-go client:
// its instance is restored at start, the client reconnects and redoes its
// registration, and once the grace has passed the instance is still
// listed on both agents, held by the new connection, and the subscriber
// on the other agent was never told it was gone. Before, the door's
// Close withdrew it at shutdown and nothing was restored: the instance
// was gone until the client's redo.
func TestRestartKeepsInstances(t *testing.T) {
	const graceHere = 2 * time.Second
	addr := freeNacosAddr(t)
	var buf testutil.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the agents' log:\n%s", buf.String())
		}
	})
	c := agenttest.Start(t, 2, agenttest.WithDataDirs(t.TempDir()), func(cfg *agent.Config) {
		cfg.NacosGrace = agent.Duration(graceHere)
		cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		if cfg.NodeName == "agent-0" {
			cfg.NacosAddr = addr
		}
	})
	provider, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: clientConfig(t.TempDir()),
		ServerConfigs: serverConfigs(t, agent.Door[*nacos.Server](c.Agent(0)))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(provider.CloseClient)
	if ok, err := provider.RegisterInstance(dubboParam("10.0.0.78", 50052)); !ok || err != nil {
		t.Fatalf("register: %v %v", ok, err)
	}
	sub := namingClient(t, agent.Door[*nacos.Server](c.Agent(1)))
	var l latest
	if err := sub.Subscribe(&vo.SubscribeParam{ServiceName: dubboService, SubscribeCallback: l.callback}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, l.is("[10.0.0.78:50052]"))

	const iface = "org.apache.dubbo.demo.DemoService"
	listed := func(i int) bool { a := c.Agent(i); return a != nil && len(a.Table().URLs(iface, "providers")) == 1 }
	var missing atomic.Int64 // polls of agent 1 that found no instance
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if !listed(1) {
				missing.Add(1)
			}
		}
	}()
	nacosLeases := func(a *agent.Agent) []string {
		var ids []string
		for _, l := range a.Host().(interface{ Leases() []lease.Lease }).Leases() {
			if l.Door == "nacos" {
				ids = append(ids, l.ID)
			}
		}
		return ids
	}
	before := nacosLeases(c.Agent(0))
	if len(before) != 1 {
		t.Fatalf("Nacos leases before the restart: %q, want the provider's connection's", before)
	}
	a := c.Restart(0)
	if !listed(0) {
		t.Fatalf("the restarted agent lists %q: the instance was not restored", a.Table().URLs(iface, "providers"))
	}
	// Past the restored holder's grace (from readiness), the instance is
	// held by the client's new connection.
	testutil.Eventually(t, 30*time.Second, func() error {
		if g := agent.Door[*nacos.Server](a).Gauges(); g.Connections < 1 || g.Instances != 1 {
			return fmt.Errorf("door gauges %+v: the client has not reconnected", g)
		}
		return nil
	})
	// The holder restored from before the restart lets go after the grace:
	// then only the new connection's lease holds the instance.
	testutil.Eventually(t, 30*time.Second, func() error {
		if ids := nacosLeases(a); len(ids) != 1 || ids[0] == before[0] {
			return fmt.Errorf("Nacos leases %q (before the restart %q): the restored holder has not let go yet, or the client has not re-registered", ids, before)
		}
		return nil
	})
	close(stop)
	<-polled
	if !listed(0) || !listed(1) {
		t.Fatalf("past the grace agent 0 lists %q, agent 1 %q: the client's redo did not keep its instance",
			a.Table().URLs(iface, "providers"), c.Agent(1).Table().URLs(iface, "providers"))
	}
	if err := l.is("[10.0.0.78:50052]")(); err != nil {
		t.Fatal(err)
	}
	for _, told := range l.told {
		if told == "[]" {
			t.Fatalf("the subscriber on agent 1 was told the instance was gone: callbacks %v", l.told)
		}
	}
	if n := missing.Load(); n > 0 {
		t.Fatalf("agent 1 listed no instance in %d polls (10 ms apart) across the restart", n)
	}
}
