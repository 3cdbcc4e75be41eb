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

// A check that fails on the agent holding its service takes the service
// out of DNS and ?passing on every agent at the speed a registration
// spreads (P1), not at a sync interval: the check's state is part of the
// record.
func TestFailedCheckLeavesDNSAndPassingEverywhere(t *testing.T) {
	c := agenttest.Start(t, 2)
	holder, other := c.Agent(0).Addr("consul"), c.Agent(1)
	consul := func(method, path string, body any) {
		t.Helper()
		if code, _ := call(t, method, holder, path, body, nil); code/100 != 2 {
			t.Fatalf("%s %s: %d", method, path, code)
		}
	}
	consul("PUT", "/v1/agent/service/register", map[string]any{"Name": "web", "ID": "web-1", "Address": "10.9.2.1", "Port": 80,
		"Check": map[string]any{"CheckID": "web-ttl", "TTL": "1h"}})
	consul("PUT", "/v1/agent/check/pass/web-ttl", nil)
	dnsAnswers := func() (int, error) {
		q := new(miekg.Msg)
		q.SetQuestion("web.service.consul.", miekg.TypeA)
		m, _, err := (&miekg.Client{Timeout: 5 * time.Second}).Exchange(q, other.Addr("dns-udp"))
		if err != nil {
			return 0, err
		}
		return len(m.Answer), nil
	}
	passing := func() int {
		var out []any
		call(t, "GET", other.Addr("consul"), "/v1/health/service/web?passing", nil, &out)
		return len(out)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if n, err := dnsAnswers(); err != nil || n != 1 || passing() != 1 {
			return fmt.Errorf("after pass: DNS %d answers (%v), ?passing %d", n, err, passing())
		}
		return nil
	})
	failed := time.Now()
	consul("PUT", "/v1/agent/check/fail/web-ttl", nil)
	testutil.Eventually(t, 10*time.Second, func() error {
		if n, err := dnsAnswers(); err != nil || n != 0 || passing() != 0 {
			return fmt.Errorf("after fail: DNS %d answers (%v), ?passing %d", n, err, passing())
		}
		return nil
	})
	t.Logf("the failed check left the other agent's DNS and ?passing after %v", time.Since(failed))
}
