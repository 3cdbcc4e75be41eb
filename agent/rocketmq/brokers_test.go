package rocketmq

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

func TestRegisterAndRouteForms(t *testing.T) {
	testutil.CheckLeaks(t)
	for _, tc := range []struct {
		name       string
		version    int
		compressed bool
	}{{"4.9 json", 409, false}, {"4.9 compressed", 409, true}, {"5.x json", 479, false}, {"5.x compressed", 479, true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, newFake())
			c := dial(t, s)
			b := brokerA()
			b.Version, b.Compressed = tc.version, tc.compressed
			resp := register(t, c, b)
			if resp.ExtFields["masterAddr"] != "" || len(resp.Body) != 0 {
				t.Errorf("a master's registration answer = %v", resp)
			}
			// Go client v2.1.2 (317) gets bare broker-id keys, 5.x clients quoted.
			legacy, err := c.Route("TopicTest", remoting.VersionGoClient)
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, legacy, remoting.Success, "")
			want := `{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
			if string(legacy.Body) != want {
				t.Errorf("legacy body\n got %s\nwant %s", legacy.Body, want)
			}
			std, _ := c.Route("TopicTest", remoting.VersionCurrent)
			if !bytes.Contains(std.Body, []byte(`"brokerAddrs":{"0":"10.0.0.1:10911"}`)) {
				t.Errorf("standard body %s", std.Body)
			}
			if r, _ := c.Route("TBW102", 317); r.Code != remoting.Success || !bytes.Contains(r.Body, []byte(`"writeQueueNums":8`)) {
				t.Errorf("TBW102 = %v %s", r, r.Body)
			}
		})
	}
}

func TestRouteNotFoundAndNotReady(t *testing.T) {
	testutil.CheckLeaks(t)
	reg := newFake()
	s := startServer(t, reg)
	c := dial(t, s)
	resp, _ := c.Route("Nope", 317)
	wantCode(t, resp, remoting.TopicNotExist,
		"No topic route info in name server for the topic: Nope\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
	reg.NotYet.Store(true)
	resp, _ = c.Route("Nope", 317)
	wantCode(t, resp, remoting.SystemError, "name server not ready")
	resp = do(t, c, remoting.GetRouteInfoByTopic, nil, nil)
	wantCode(t, resp, remoting.SystemError, "the custom field <topic> is null")
}

func TestAcceptStandardJSONOnly(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	register(t, c, brokerA())
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": "TopicTest", "acceptStandardJsonOnly": "true"}, nil)
	req.Version = remoting.VersionGoClient
	_, ch, err := c.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp := <-ch; !bytes.Contains(resp.Body, []byte(`{"0":"10.0.0.1:10911"}`)) {
		t.Errorf("opted-in old client got %s", resp.Body)
	}
}

// §5.6: a wiped write permission must survive the broker's periodic
// re-registrations with an unchanged DataVersion, and end when the
// DataVersion changes, on addWritePerm, or on a fresh registration.
func TestWipeWritePermSurvivesReregistration(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake())
	c := dial(t, s)
	b := brokerA()
	register(t, c, b)
	resp := do(t, c, remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	if resp.Code != 0 || resp.ExtFields["wipeTopicCount"] != "2" {
		t.Fatalf("wipe answered %v", resp)
	}
	for i := 0; i < 3; i++ { // three "30 s" re-registrations, same DataVersion
		register(t, c, b)
		if p := perms(t, c, "TopicTest")["broker-a"]; p != 4 {
			t.Fatalf("re-registration %d restored perm to %d", i, p)
		}
	}
	resp = do(t, c, remoting.AddWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	if resp.ExtFields["addTopicCount"] != "2" || perms(t, c, "TopicTest")["broker-a"] != 6 {
		t.Fatalf("add write perm: %v, perm %d", resp, perms(t, c, "TopicTest")["broker-a"])
	}

	do(t, c, remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	b.DataVersion.Counter++ // the broker changed its topic config
	register(t, c, b)
	if p := perms(t, c, "TBW102")["broker-a"]; p != 6 {
		t.Fatalf("a new DataVersion left perm %d", p)
	}

	do(t, c, remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	if err := c.Unregister(b); err != nil {
		t.Fatal(err)
	}
	register(t, c, b)
	if p := perms(t, c, "TopicTest")["broker-a"]; p != 6 {
		t.Fatalf("a fresh registration left perm %d", p)
	}
	// Wiping an unknown broker counts nothing.
	resp = do(t, c, remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "nobody"}, nil)
	if resp.ExtFields["wipeTopicCount"] != "0" {
		t.Errorf("wipe of an unknown broker: %v", resp)
	}
}

// Incremental registrations and split registration merge per topic; a topic
// new to the broker is applied even under the same DataVersion (5.x).
func TestRegistrationMergesPerTopic(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	b := brokerA()
	register(t, c, b)
	do(t, c, remoting.WipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	chunk := *b
	chunk.Topics = map[string]remoting.TopicConfig{"Orders": rocketmqtest.Topic("Orders", 2), "TopicTest": rocketmqtest.Topic("TopicTest", 4)}
	register(t, c, &chunk)
	if p := perms(t, c, "Orders")["broker-a"]; p != 6 {
		t.Errorf("new topic Orders: perm %d", p)
	}
	if p := perms(t, c, "TopicTest")["broker-a"]; p != 4 {
		t.Errorf("known topic re-applied under the same DataVersion: perm %d", p)
	}
	if route(t, c, "TBW102") == nil {
		t.Error("a partial registration dropped TBW102")
	}
}

// #4522: a one-topic registration from a broker not yet registered must not
// stand for its whole table.
func TestFirstRegistrationGuard(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	b := brokerA()
	one := *b
	one.Topics = map[string]remoting.TopicConfig{"Orders": rocketmqtest.Topic("Orders", 2)}
	req, _ := one.RegisterRequest()
	resp := do(t, c, req.Code, req.ExtFields, req.Body)
	wantCode(t, resp, remoting.SystemError, "register broker failed")
	if route(t, c, "Orders") != nil {
		t.Fatal("refused registration is routable")
	}
	register(t, c, b)
	register(t, c, &one) // now an incremental registration is fine
	if route(t, c, "Orders") == nil || route(t, c, "TopicTest") == nil {
		t.Fatal("incremental registration after the full one was not merged")
	}
}

func TestSlaveLearnsMaster(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	slave := brokerA()
	slave.ID, slave.Addr, slave.HAAddr = 1, "10.0.0.2:10911", "10.0.0.2:10912"
	slave.Version = 409 // 4.x: a slave never defines topics
	slave.Topics["SlaveOnly"] = rocketmqtest.Topic("SlaveOnly", 1)
	resp := register(t, c, slave)
	if _, ok := resp.ExtFields["masterAddr"]; ok {
		t.Errorf("no master yet, but got %v", resp.ExtFields)
	}
	register(t, c, brokerA())
	resp = register(t, c, slave)
	if resp.ExtFields["masterAddr"] != "10.0.0.1:10911" || resp.ExtFields["haServerAddr"] != "10.0.0.1:10912" {
		t.Errorf("slave's answer %v", resp.ExtFields)
	}
	if route(t, c, "SlaveOnly") != nil {
		t.Error("a 4.x-style slave's topics were applied")
	}
	td := route(t, c, "TopicTest")
	if td == nil || td.BrokerDatas[0].BrokerAddrs[1] != "10.0.0.2:10911" || td.BrokerDatas[0].BrokerAddrs[0] != "10.0.0.1:10911" {
		t.Fatalf("route %+v", td)
	}
	// The master leaves: the slave-only group keeps its queues, readable.
	if err := c.Unregister(brokerA()); err != nil {
		t.Fatal(err)
	}
	td = route(t, c, "TopicTest")
	if td == nil || len(td.BrokerDatas[0].BrokerAddrs) != 1 || td.BrokerDatas[0].BrokerAddrs[1] == "" {
		t.Fatalf("after the master left: %+v", td)
	}
	if err := c.Unregister(slave); err != nil {
		t.Fatal(err)
	}
	if td := route(t, c, "TopicTest"); td != nil {
		t.Fatalf("empty group still routed: %+v", td)
	}
}

// A 5.x slave with the smallest id defines the topics while no master is
// registered (prime slave); with slave acting master its queues are
// read-only.
func TestPrimeSlave(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	slave := brokerA()
	slave.ID, slave.Addr, slave.ActingMaster = 1, "10.0.0.2:10911", true
	register(t, c, slave)
	if p := perms(t, c, "TopicTest")["broker-a"]; p != 4 {
		t.Fatalf("prime slave perm %d, want 4 (write stripped)", p)
	}
}

// One address, one id: a slave promoted to master re-registers as id 0.
func TestAddressDedupAcrossIDs(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	b := brokerA()
	b.ID = 1
	register(t, c, b)
	b.ID = 0
	register(t, c, b)
	td := route(t, c, "TopicTest")
	if td == nil || len(td.BrokerDatas[0].BrokerAddrs) != 1 || td.BrokerDatas[0].BrokerAddrs[0] != b.Addr {
		t.Fatalf("route after promotion %+v", td)
	}
}

func TestConnectionCloseUnregisters(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake())
	admin := dial(t, s)
	c1 := dial(t, s)
	register(t, c1, brokerA())
	c1.Close()
	routeEventually(t, admin, "TopicTest", gone)

	// A broker that re-registered over a new connection keeps its entry
	// when the old connection closes late (issue #11043).
	old, fresh := dial(t, s), dial(t, s)
	register(t, old, brokerA())
	register(t, fresh, brokerA())
	old.Close()
	// The close is handled asynchronously; a request through the same
	// server after it shows the broker still routed.
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := s.conns.Len(); n != 2 { // admin and fresh
			return fmt.Errorf("%d connections", n)
		}
		return nil
	})
	if route(t, admin, "TopicTest") == nil {
		t.Fatal("closing a stale connection withdrew a live broker")
	}
}

func TestExpiry(t *testing.T) {
	testutil.CheckLeaks(t)
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s := startServer(t, newFake(), func(c *Config) { c.clock = clock.Now; c.ScanInterval = time.Hour })
	admin := dial(t, s)
	c := dial(t, s)
	b := brokerA()
	register(t, c, b)
	clock.Advance(119 * time.Second)
	s.expireBrokers()
	if route(t, admin, "TopicTest") == nil {
		t.Fatal("expired before 120 s")
	}
	// A oneway 5.x heartbeat refreshes; the 322 after it runs on the same
	// worker, so once it is answered the heartbeat has been applied.
	if _, _, err := c.Send(b.HeartbeatRequest()); err != nil {
		t.Fatal(err)
	}
	resp := do(t, c, remoting.QueryDataVersion, map[string]string{"brokerName": "broker-a", "brokerAddr": b.Addr,
		"clusterName": b.Cluster, "brokerId": "0"}, b.DataVersion.AppendJSON(nil))
	if resp.ExtFields["changed"] != "false" {
		t.Errorf("query data version: %v", resp)
	}
	clock.Advance(119 * time.Second)
	s.expireBrokers()
	if route(t, admin, "TopicTest") == nil {
		t.Fatal("heartbeat did not refresh")
	}
	clock.Advance(2 * time.Second)
	s.expireBrokers()
	if route(t, admin, "TopicTest") != nil {
		t.Fatal("not expired after 121 s of silence")
	}
	select {
	case <-c.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("expiry did not close the broker's connection")
	}
}

// The registration's heartbeatTimeoutMillis overrides the default, and the
// scan loop runs on its own.
func TestExpiryByHeaderTimeout(t *testing.T) {
	testutil.CheckLeaks(t)
	s := startServer(t, newFake(), func(c *Config) { c.ScanInterval = 10 * time.Millisecond })
	admin := dial(t, s)
	c := dial(t, s)
	b := brokerA()
	b.HeartbeatTimeout = 30 * time.Millisecond
	register(t, c, b)
	routeEventually(t, admin, "TopicTest", gone)
	<-c.Closed()
}

func TestQueryDataVersion(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	b := brokerA()
	ext := map[string]string{"brokerName": b.Name, "brokerAddr": b.Addr, "clusterName": b.Cluster, "brokerId": "0"}
	resp := do(t, c, remoting.QueryDataVersion, ext, b.DataVersion.AppendJSON(nil))
	if resp.ExtFields["changed"] != "true" || len(resp.Body) != 0 {
		t.Fatalf("unknown broker: %v", resp)
	}
	register(t, c, b)
	resp = do(t, c, remoting.QueryDataVersion, ext, b.DataVersion.AppendJSON(nil))
	if resp.ExtFields["changed"] != "false" || string(resp.Body) != string(b.DataVersion.AppendJSON(nil)) {
		t.Fatalf("same version: %v %s", resp, resp.Body)
	}
	newer := b.DataVersion
	newer.Counter++
	resp = do(t, c, remoting.QueryDataVersion, ext, newer.AppendJSON(nil))
	if resp.ExtFields["changed"] != "true" {
		t.Fatalf("newer version: %v", resp)
	}
}

func TestRegisterBadInput(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	req, _ := brokerA().RegisterRequest()
	req.ExtFields["bodyCrc32"] = "12345"
	wantCode(t, do(t, c, req.Code, req.ExtFields, req.Body), remoting.SystemError, "crc32 not match")
	req, _ = brokerA().RegisterRequest()
	delete(req.ExtFields, "brokerName")
	wantCode(t, do(t, c, req.Code, req.ExtFields, req.Body), remoting.SystemError, "the custom field <brokerName> is null")
	req, _ = brokerA().RegisterRequest()
	req.ExtFields["brokerName"] = "a/b"
	if resp := do(t, c, req.Code, req.ExtFields, req.Body); resp.Code != remoting.SystemError {
		t.Errorf("a broker name with '/' was accepted: %v", resp)
	}
	req, _ = brokerA().RegisterRequest()
	delete(req.ExtFields, "bodyCrc32")
	if resp := do(t, c, req.Code, req.ExtFields, []byte("\x01garbage")); resp.Code != remoting.SystemError {
		t.Errorf("an undecodable body was accepted: %v", resp)
	}
}
