package dns

import (
	"slices"
	"testing"

	miekg "github.com/miekg/dns"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// The agent's catalog: the Consul model's instances, a name spelled in
// any case, each node's address its live gossip member's host.
func TestHostCatalog(t *testing.T) {
	tab := routes.NewTable("agent-a", 1)
	if _, ok := tab.ApplyLocal([]routes.Record{{Broker: &routes.Broker{Cluster: "c", Name: "b1", ID: 0, Addr: "10.9.0.1:10911"}}}, nil); !ok {
		t.Fatal("broker not applied")
	}
	members := []gossip.Member{
		{Name: "agent-a", Addr: "192.0.2.1:7946", Status: gossip.StatusAlive},
		{Name: "agent-b", Addr: "192.0.2.2:7946", Status: gossip.StatusAlive},
		{Name: "agent-c", Addr: "192.0.2.3:7946", Status: gossip.StatusDead},
	}
	cat := newHostCatalog(tab, "agent-a", func() []gossip.Member { return members })
	a := testAnswerer(cat)
	for _, name := range []string{"rocketmq-broker.service.consul.", "RocketMQ-Broker.Service.Consul.", "MASTER.rocketmq-broker.service.consul."} {
		m := ask(t, a, query(name, miekg.TypeA), false)
		if got := addrs(m.Answer); !slices.Equal(got, []string{"10.9.0.1"}) {
			t.Errorf("%s: %v", name, m)
		}
	}
	ins := cat.Instances("rocketmq-broker")
	if len(ins) != 1 || ins[0].Node != "agent-a" || ins[0].NodeAddr != "192.0.2.1" || ins[0].Port != 10911 || ins[0].Status != Passing {
		t.Fatalf("instances %+v", ins)
	}
	if n, ok := cat.Node("Agent-B"); !ok || n.Addr != "192.0.2.2" {
		t.Fatalf("node agent-b: %v %v", n, ok)
	}
	if _, ok := cat.Node("agent-c"); ok {
		t.Fatal("a dead member answered as a node")
	}
	m := ask(t, a, query("nope.service.consul.", miekg.TypeA), false)
	if m.Rcode != miekg.RcodeNameError {
		t.Fatalf("unknown service: %v", m)
	}
}
