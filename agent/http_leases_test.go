package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// TestBrokerLeasesShownOnEveryAgent registers a broker with a TTL on
// agent-0 and reads GET /v1/brokers?leases on agent-1: agent-1 asks
// agent-0 (the record's origin) and shows the broker's last registration
// and expiry as agent-0 computed them on its own clock.
func TestBrokerLeasesShownOnEveryAgent(t *testing.T) {
	c := agenttest.Start(t, 2)
	a0, a1 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr()
	reg := brokerReg("b0", "192.0.2.1:10911", "T0")
	reg["ttl"] = "30s"
	if status, _ := call(t, "PUT", a0, "/v1/brokers", reg, nil); status != 200 {
		t.Fatalf("PUT /v1/brokers on agent-0: %d", status)
	}

	var local httpapi.LeaseView
	call(t, "GET", a0, "/v1/brokers/leases", nil, &local)
	if local.Node != "agent-0" || len(local.Brokers) != 1 || local.Brokers[0].Door != "http" {
		t.Fatalf("agent-0's own leases: %+v", local)
	}

	testutil.Eventually(t, 10*time.Second, func() error {
		var got struct{ Brokers []httpapi.BrokerEntry }
		call(t, "GET", a1, "/v1/brokers?leases", nil, &got)
		if len(got.Brokers) != 1 {
			return fmt.Errorf("agent-1 lists %d brokers, want 1", len(got.Brokers))
		}
		b := got.Brokers[0]
		if b.Origin != "agent-0" || b.LeaseUnknown || b.Lease == nil {
			return fmt.Errorf("agent-1's entry: %+v", b)
		}
		l := b.Lease
		if l.Door != "http" || l.Registered.IsZero() || l.Expires.Sub(l.Registered) != 30*time.Second {
			return fmt.Errorf("lease as agent-1 shows it: %+v", l)
		}
		if l.RegisteredAgoMs < 0 || l.RegisteredAgoMs > 30_000 || l.ExpiresInMs == nil || *l.ExpiresInMs <= 0 || *l.ExpiresInMs > 30_000 {
			return fmt.Errorf("durations as agent-0 computed them: ago %dms, expires in %v", l.RegisteredAgoMs, l.ExpiresInMs)
		}
		return nil
	})

	// Without ?leases the list stays as it was: no fan-out.
	var plain struct{ Brokers []httpapi.BrokerEntry }
	call(t, "GET", a1, "/v1/brokers", nil, &plain)
	if len(plain.Brokers) != 1 || plain.Brokers[0].Lease != nil || plain.Brokers[0].LeaseUnknown {
		t.Fatalf("GET /v1/brokers without ?leases: %+v", plain.Brokers)
	}
}

// TestBrokerLeaseOfRocketMQBroker: a broker registered over the RocketMQ
// door on agent-0 shows, read on agent-1, its last registration and the
// expiry its 120 s timeout gives, as a NameServer would.
func TestBrokerLeaseOfRocketMQBroker(t *testing.T) {
	c := agenttest.Start(t, 2)
	cl, err := rocketmqtest.Dial(c.Agent(0).Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	br := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "rb", Addr: "192.0.2.7:10911",
		Topics: map[string]remoting.TopicConfig{"RT": rocketmqtest.Topic("RT", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	if resp, err := cl.Register(br); err != nil || resp.Code != remoting.Success {
		t.Fatalf("register over RocketMQ: %v %v", resp, err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		var got struct{ Brokers []httpapi.BrokerEntry }
		call(t, "GET", c.Agent(1).HTTPAddr(), "/v1/brokers?leases", nil, &got)
		if len(got.Brokers) != 1 || got.Brokers[0].Lease == nil {
			return fmt.Errorf("agent-1 lists %+v", got.Brokers)
		}
		l := got.Brokers[0].Lease
		if l.Door != "rocketmq" || l.Registered.IsZero() || l.Expires.Sub(l.Registered) != 120*time.Second || l.ExpiresInMs == nil {
			return fmt.Errorf("lease as agent-1 shows it: %+v", l)
		}
		return nil
	})
}
