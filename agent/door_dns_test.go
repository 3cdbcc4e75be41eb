package agent_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	miekg "github.com/miekg/dns"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// A broker registered on one agent is a Consul service every agent's DNS
// door answers, over UDP and TCP, with the agent that holds it as its
// node; the broker's going is NXDOMAIN there as fast.
func TestDNSDoorAnswersWhatAnyAgentHolds(t *testing.T) {
	c := agenttest.Start(t, 2)
	b := c.Agent(1)
	udp, tcp := b.Addr("dns-udp"), b.Addr("dns")
	if udp == "" || udp != tcp {
		t.Fatalf("dns door: udp %q tcp %q, want one port for both", udp, tcp)
	}
	call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("b1", "10.9.0.1:10911", "DNSTopic"), nil)
	ask := func(network, name string, qtype uint16) (*miekg.Msg, error) {
		q := new(miekg.Msg)
		q.SetQuestion(name, qtype)
		cl := &miekg.Client{Net: network, Timeout: 5 * time.Second}
		m, _, err := cl.Exchange(q, udp)
		return m, err
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		m, err := ask("udp", "master.rocketmq-broker.service.consul.", miekg.TypeA)
		if err != nil {
			return err
		}
		if len(m.Answer) != 1 || m.Answer[0].(*miekg.A).A.String() != "10.9.0.1" {
			return fmt.Errorf("answer %v", m.Answer)
		}
		return nil
	})
	m, err := ask("tcp", "_rocketmq-broker._tcp.service.consul.", miekg.TypeSRV)
	if err != nil || len(m.Answer) != 1 {
		t.Fatalf("SRV over TCP: %v %v", m, err)
	}
	if srv := m.Answer[0].(*miekg.SRV); srv.Port != 10911 || srv.Target != "0a090001.addr.dc1.consul." {
		t.Fatalf("SRV %v", srv)
	}
	m, err = ask("udp", "agent-0.node.consul.", miekg.TypeA)
	if err != nil || len(m.Answer) != 1 || m.Answer[0].(*miekg.A).A.String() != "127.0.0.1" {
		t.Fatalf("node lookup: %v %v", m, err)
	}
	call(t, "DELETE", c.Agent(0).HTTPAddr(), "/v1/brokers/DefaultCluster/b1/0", nil, nil)
	testutil.Eventually(t, 20*time.Second, func() error {
		m, err := ask("udp", "rocketmq-broker.service.consul.", miekg.TypeA)
		if err != nil {
			return err
		}
		if m.Rcode != miekg.RcodeNameError {
			return fmt.Errorf("after the broker went: %v", m)
		}
		return nil
	})
}

// A taken DNS port (UDP or TCP) stops the agent with a message naming the
// port and the way out; "off" starts no listener.
func TestDNSPortTaken(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cfg := agent.DefaultConfig()
	cfg.NodeName = "dns-port"
	cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "127.0.0.1:0", "127.0.0.1:0", "off", "off", "off"
	cfg.DNSAddr = pc.LocalAddr().String()
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Start(t.Context())
	if err == nil {
		a.Shutdown()
		t.Fatal("agent started on a taken DNS port")
	}
	for _, want := range []string{pc.LocalAddr().String(), "--dns off", "--dns HOST:PORT"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	off := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.DNSAddr = "off" })
	if got := off.Agent(0).Addr("dns"); got != "" {
		t.Fatalf(`DNSAddr "off": dns door on %q`, got)
	}
}
