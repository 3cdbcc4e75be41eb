package consul_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// Register with checks on agent 0 (a TTL check and a TCP check against a
// live port), find it with a blocking ?passing health query on agent 1,
// follow its TTL check failing and passing there, and deregister it.
func TestRegisterWithChecksBlockingHealthAcrossAgents(t *testing.T) {
	c := agenttest.Start(t, 2)
	a, b := client(t, c, 0), client(t, c, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()

	_, meta, err := b.Health().Service("web", "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		entries []*api.ServiceEntry
		meta    *api.QueryMeta
		err     error
	}
	got := make(chan answer, 1)
	go func() {
		es, m, err := b.Health().Service("web", "v1", true, &api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 30 * time.Second})
		got <- answer{es, m, err}
	}()
	reg := &api.AgentServiceRegistration{ID: "web-1", Name: "web", Tags: []string{"v1", "edge"}, Port: 8080, Address: "127.0.0.1",
		Meta: map[string]string{"team": "blue"},
		Checks: api.AgentServiceChecks{
			{CheckID: "web-ttl", Name: "heartbeat", TTL: "30s", Status: api.HealthPassing},
			{CheckID: "web-tcp", Name: "port", TCP: ln.Addr().String(), Interval: "1s", Timeout: "1s", Status: api.HealthPassing},
		}}
	if err := a.Agent().ServiceRegister(reg); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-got:
		if ans.err != nil {
			t.Fatal(ans.err)
		}
		if len(ans.entries) != 1 || ans.entries[0].Service.ID != "web-1" || ans.entries[0].Node.Node != c.Name(0) ||
			ans.entries[0].Service.Meta["team"] != "blue" || len(ans.entries[0].Checks) != 3 || ans.meta.LastIndex <= meta.LastIndex ||
			!ans.meta.KnownLeader {
			t.Fatalf("blocking answer on agent 1: %+v %+v", ans.entries, ans.meta)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking health query on agent 1 not answered within 20s of the registration on agent 0")
	}
	svcs, err := a.Agent().Services()
	if err != nil || svcs["web-1"] == nil || svcs["web-1"].Port != 8080 {
		t.Fatalf("agent 0's services: %v %v", svcs, err)
	}

	if err := a.Agent().FailTTL("web-ttl", "stuck"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		es, _, err := b.Health().Service("web", "", true, nil)
		if err != nil || len(es) != 0 {
			return fmt.Errorf("agent 1 ?passing after the TTL check failed: %d entries, %v", len(es), err)
		}
		all, _, err := b.Health().Checks("web", nil)
		for _, ch := range all {
			if ch.CheckID == "web-ttl" && ch.Status == api.HealthCritical && ch.Output == "stuck" {
				return nil
			}
		}
		return fmt.Errorf("agent 1's checks of web: %+v %v", all, err)
	})
	if err := a.Agent().PassTTL("web-ttl", ""); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if es, _, err := b.Health().Service("web", "", true, nil); err != nil || len(es) != 1 {
			return fmt.Errorf("agent 1 ?passing after the TTL check passed: %d entries, %v", len(es), err)
		}
		return nil
	})
	if err := a.Agent().PassTTL("nope", ""); err == nil {
		t.Error("PassTTL of an unknown check succeeded")
	}
	if err := a.Agent().ServiceDeregister("web-1"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if es, _, err := b.Health().Service("web", "", false, nil); err != nil || len(es) != 0 {
			return fmt.Errorf("agent 1 after the deregistration: %d entries, %v", len(es), err)
		}
		return nil
	})
}

// KV with check-and-set: the ModifyIndex agent 1 reads is the one agent 0
// takes a CAS on; a stale index is refused; list, keys, delete.
func TestKVWithCASAcrossAgents(t *testing.T) {
	c := agenttest.Start(t, 2)
	a, b := client(t, c, 0), client(t, c, 1)
	kv0, kv1 := a.KV(), b.KV()
	if _, err := kv0.Put(&api.KVPair{Key: "config/shop/data", Value: []byte("port: 8080"), Flags: 7}, nil); err != nil {
		t.Fatal(err)
	}
	var pair *api.KVPair
	testutil.Eventually(t, 20*time.Second, func() error {
		var err error
		pair, _, err = kv1.Get("config/shop/data", nil)
		if err != nil || pair == nil || string(pair.Value) != "port: 8080" || pair.Flags != 7 {
			return fmt.Errorf("agent 1 reads %+v, %v", pair, err)
		}
		return nil
	})
	ok, _, err := kv0.CAS(&api.KVPair{Key: "config/shop/data", Value: []byte("port: 9090"), ModifyIndex: pair.ModifyIndex}, nil)
	if err != nil || !ok {
		t.Fatalf("CAS on agent 0 with agent 1's index: %v %v", ok, err)
	}
	ok, _, err = kv0.CAS(&api.KVPair{Key: "config/shop/data", Value: []byte("stale"), ModifyIndex: pair.ModifyIndex}, nil)
	if err != nil || ok {
		t.Fatalf("CAS with a stale index: %v %v", ok, err)
	}
	ok, _, err = kv0.CAS(&api.KVPair{Key: "config/shop/new", Value: []byte("x"), ModifyIndex: 0}, nil)
	if err != nil || !ok {
		t.Fatalf("CAS 0 of a new key: %v %v", ok, err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		pairs, _, err := kv1.List("config/shop/", nil)
		if err != nil || len(pairs) != 2 || string(pairs[0].Value) != "port: 9090" {
			return fmt.Errorf("agent 1 lists %v, %v", pairs, err)
		}
		keys, _, err := kv1.Keys("config/", "/", nil)
		if err != nil || len(keys) != 1 || keys[0] != "config/shop/" {
			return fmt.Errorf("agent 1 keys %v, %v", keys, err)
		}
		return nil
	})
	if _, err := kv1.DeleteTree("config/", nil); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if p, _, err := kv0.Get("config/shop/data", nil); err != nil || p != nil {
			return fmt.Errorf("agent 0 after the delete: %+v %v", p, err)
		}
		return nil
	})
}

// The catalog and agent endpoints as consul/api reads them, and a Dubbo
// provider registered through another door found as Dubbo's own Consul
// registry looks it up (tag dubbo, passing, its URL in Meta["url"]).
func TestCatalogAndOtherDoors(t *testing.T) {
	c := agenttest.Start(t, 2)
	a, b := client(t, c, 0), client(t, c, 1)
	self, err := b.Agent().Self()
	if err != nil || self["Config"]["Datacenter"] != "dc1" || self["Config"]["NodeName"] != c.Name(1) {
		t.Fatalf("agent/self: %v %v", self["Config"], err)
	}
	if name, err := b.Agent().NodeName(); err != nil || name != c.Name(1) {
		t.Fatalf("NodeName: %q %v", name, err)
	}
	if leader, err := b.Status().Leader(); err != nil || leader == "" {
		t.Fatalf("leader: %q %v", leader, err)
	}
	members, err := b.Agent().Members(false)
	if err != nil || len(members) != 2 {
		t.Fatalf("members: %v %v", members, err)
	}
	provider := "dubbo://127.0.0.1:20880/org.demo.Greeter?application=shop&side=provider&version=1.0"
	putURL(t, c, 0, provider)
	testutil.Eventually(t, 20*time.Second, func() error {
		es, _, err := b.Health().Service("org.demo.Greeter", "dubbo", true, nil)
		if err != nil || len(es) != 1 || es[0].Service.Meta["url"] != provider || es[0].Service.Port != 20880 {
			return fmt.Errorf("Dubbo provider through consul/api on agent 1: %+v %v", es, err)
		}
		return nil
	})
	nodes, _, err := a.Catalog().Nodes(nil)
	if err != nil || len(nodes) != 2 {
		t.Fatalf("catalog nodes: %v %v", nodes, err)
	}
	svcs, _, err := a.Catalog().Services(nil)
	if err != nil || svcs["org.demo.Greeter"] == nil {
		t.Fatalf("catalog services: %v %v", svcs, err)
	}
	cs, _, err := a.Catalog().Service("org.demo.Greeter", "version=1.0", &api.QueryOptions{Filter: `ServiceMeta.protocol == "dubbo"`})
	if err != nil || len(cs) != 1 || cs[0].Node != c.Name(0) || cs[0].ServiceAddress != "127.0.0.1" {
		t.Fatalf("catalog service with tag and filter: %+v %v", cs, err)
	}
}
