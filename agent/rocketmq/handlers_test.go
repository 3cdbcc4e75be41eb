package rocketmq

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

func TestKVConfig(t *testing.T) {
	testutil.CheckLeaks(t)
	regs := hosttest.Cluster("agent-a", "agent-b")
	a, b := startServer(t, regs[0]), startServer(t, regs[1])
	ca, cb := dial(t, a), dial(t, b)
	put := map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest", "value": "broker-a:4"}
	wantCode(t, do(t, ca, remoting.PutKVConfig, put, nil), remoting.Success, "")
	// Cluster-wide: the other agent serves it.
	resp := do(t, cb, remoting.GetKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest"}, nil)
	if resp.Code != 0 || resp.ExtFields["value"] != "broker-a:4" {
		t.Fatalf("get: %v", resp)
	}
	resp = do(t, cb, remoting.GetKVListByNamespace, map[string]string{"namespace": "ORDER_TOPIC_CONFIG"}, nil)
	if string(resp.Body) != `{"table":{"TopicTest":"broker-a:4"}}` {
		t.Fatalf("list: %v %s", resp, resp.Body)
	}
	// Registering brokers get the ordered topics back.
	if r := register(t, ca, brokerA()); string(r.Body) != `{"table":{"TopicTest":"broker-a:4"}}` {
		t.Errorf("register answer body %q", r.Body)
	}
	wantCode(t, do(t, cb, remoting.DeleteKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest"}, nil), 0, "")
	wantCode(t, do(t, ca, remoting.GetKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest"}, nil),
		remoting.QueryNotFound, "No config item, Namespace: ORDER_TOPIC_CONFIG Key: TopicTest")
	// As Java, the namespace stays, empty: the list and the registering
	// broker get an empty table (a 4.9 broker then clears order=true).
	resp = do(t, ca, remoting.GetKVListByNamespace, map[string]string{"namespace": "ORDER_TOPIC_CONFIG"}, nil)
	if resp.Code != remoting.Success || string(resp.Body) != `{"table":{}}` {
		t.Fatalf("list after the last delete: %v %q", resp, resp.Body)
	}
	if r := register(t, cb, brokerA()); r.Code != remoting.Success || string(r.Body) != `{"table":{}}` {
		t.Errorf("register answer after the last delete: %v %q", r, r.Body)
	}
	// A namespace never written is unknown, and registrations carry no body.
	wantCode(t, do(t, ca, remoting.GetKVListByNamespace, map[string]string{"namespace": "never"}, nil),
		remoting.QueryNotFound, "No config item, Namespace: never")
	// Keys may hold '/': namespace "a" key "b/c" is not in namespace "a/b",
	// and deleting "a/b" "c" leaves it.
	wantCode(t, do(t, ca, remoting.PutKVConfig, map[string]string{"namespace": "a", "key": "b/c", "value": "v"}, nil), remoting.Success, "")
	wantCode(t, do(t, ca, remoting.GetKVListByNamespace, map[string]string{"namespace": "a/b"}, nil), remoting.QueryNotFound, "")
	wantCode(t, do(t, ca, remoting.DeleteKVConfig, map[string]string{"namespace": "a/b", "key": "c"}, nil), remoting.Success, "")
	wantCode(t, do(t, ca, remoting.GetKVConfig, map[string]string{"namespace": "a", "key": "b/c"}, nil), remoting.Success, "")
	// Deleting what is not there is fine; reserved namespaces are not writable.
	wantCode(t, do(t, ca, remoting.DeleteKVConfig, map[string]string{"namespace": "x", "key": "y"}, nil), 0, "")
	wantCode(t, do(t, ca, remoting.PutKVConfig, map[string]string{"namespace": cmdNamespace, "key": "k", "value": "v"}, nil), remoting.NoPermission, "")
	wantCode(t, do(t, ca, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k"}, nil), remoting.SystemError, "the custom field <value> is null")
}

// Java's @CFNotNull rejects only a missing header field; an empty string is
// a value.
func TestEmptyExtFieldIsAValue(t *testing.T) {
	testutil.CheckLeaks(t)
	c := dial(t, startServer(t, newFake()))
	wantCode(t, do(t, c, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": ""}, nil), remoting.Success, "")
	resp := do(t, c, remoting.GetKVConfig, map[string]string{"namespace": "ns", "key": "k"}, nil)
	if v, ok := resp.ExtFields["value"]; resp.Code != remoting.Success || !ok || v != "" {
		t.Fatalf("get of an empty value: %v", resp)
	}
	// Lookups of an empty name answer as for an absent one, not "is null".
	wantCode(t, do(t, c, remoting.GetKVListByNamespace, map[string]string{"namespace": ""}, nil), remoting.QueryNotFound, "No config item, Namespace: ")
	wantCode(t, do(t, c, remoting.GetKVConfig, map[string]string{"namespace": "ns", "key": ""}, nil), remoting.QueryNotFound, "")
	wantCode(t, do(t, c, remoting.DeleteKVConfig, map[string]string{"namespace": "", "key": ""}, nil), remoting.Success, "")
	wantCode(t, do(t, c, remoting.UnregisterBroker, map[string]string{"brokerName": "", "brokerAddr": "", "clusterName": "", "brokerId": "0"}, nil), remoting.Success, "")
	wantCode(t, do(t, c, remoting.DeleteTopicInNamesrv, map[string]string{"topic": ""}, nil), remoting.Success, "")
	// What cannot be stored fails loudly and changes nothing.
	wantCode(t, do(t, c, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "", "value": "v"}, nil), remoting.SystemError,
		`key "" is not usable: namecast cannot store an empty KV key`)
	if kv := do(t, c, remoting.GetKVListByNamespace, map[string]string{"namespace": "ns"}, nil); string(kv.Body) != `{"table":{"k":""}}` {
		t.Errorf("namespace after the refused put: %q", kv.Body)
	}
	// A missing field is still Java's error.
	wantCode(t, do(t, c, remoting.UnregisterBroker, map[string]string{"brokerName": "", "brokerAddr": "", "clusterName": ""}, nil),
		remoting.SystemError, "the custom field <brokerId> is null")
}

func topicList(t *testing.T, resp *remoting.Command) remoting.TopicList {
	t.Helper()
	wantCode(t, resp, remoting.Success, "")
	var tl remoting.TopicList
	if err := json.Unmarshal(resp.Body, &tl); err != nil {
		t.Fatalf("%s: %v", resp.Body, err)
	}
	return tl
}

func TestTopicLists(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	a := brokerA()
	unit, unitSub, both := rocketmqtest.Topic("Unit", 1), rocketmqtest.Topic("UnitSub", 1), rocketmqtest.Topic("Both", 1)
	unit.TopicSysFlag, unitSub.TopicSysFlag, both.TopicSysFlag = 1, 2, 3
	a.Topics["Unit"], a.Topics["UnitSub"], a.Topics["Both"] = unit, unitSub, both
	register(t, c, a)
	other := &rocketmqtest.Broker{Cluster: "Other", Name: "broker-x", Addr: "10.0.0.9:10911",
		Topics: map[string]remoting.TopicConfig{"X1": rocketmqtest.Topic("X1", 1), "X2": rocketmqtest.Topic("X2", 1)}}
	register(t, c, other)

	all := topicList(t, do(t, c, remoting.GetAllTopicListFromNameServer, nil, nil))
	if want := []string{"Both", "TBW102", "TopicTest", "Unit", "UnitSub", "X1", "X2"}; !reflect.DeepEqual(all.Topics, want) {
		t.Errorf("206: %v", all.Topics)
	}
	byCluster := topicList(t, do(t, c, remoting.GetTopicsByCluster, map[string]string{"cluster": "Other"}, nil))
	if !reflect.DeepEqual(byCluster.Topics, []string{"X1", "X2"}) {
		t.Errorf("224: %v", byCluster.Topics)
	}
	if tl := topicList(t, do(t, c, remoting.GetTopicsByCluster, map[string]string{"cluster": "Nope"}, nil)); len(tl.Topics) != 0 {
		t.Errorf("224 unknown cluster: %v", tl.Topics)
	}
	sys := topicList(t, do(t, c, remoting.GetSystemTopicListFromNS, nil, nil))
	if !reflect.DeepEqual(sys.Topics, []string{"DefaultCluster", "Other", "broker-a", "broker-x"}) || sys.BrokerAddr == "" {
		t.Errorf("304: %+v", sys)
	}
	for code, want := range map[int][]string{311: {"Both", "Unit"}, 312: {"Both", "UnitSub"}, 313: {"UnitSub"}} {
		if tl := topicList(t, do(t, c, code, nil, nil)); !reflect.DeepEqual(tl.Topics, want) {
			t.Errorf("%d: %v, want %v", code, tl.Topics, want)
		}
	}
}

func TestDeleteAndRegisterTopic(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	register(t, c, brokerA())
	wantCode(t, do(t, c, remoting.DeleteTopicInNamesrv, map[string]string{"topic": "TopicTest", "clusterName": "Other"}, nil), 0, "")
	if route(t, c, "TopicTest") == nil {
		t.Fatal("deleting in another cluster removed the topic")
	}
	wantCode(t, do(t, c, remoting.DeleteTopicInNamesrv, map[string]string{"topic": "TopicTest"}, nil), 0, "")
	if route(t, c, "TopicTest") != nil {
		t.Fatal("topic still routed after 216")
	}

	body := `{"brokerDatas":[],"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":2,"topicSysFlag":0,"writeQueueNums":2}]}`
	wantCode(t, do(t, c, remoting.RegisterTopicInNamesrv, map[string]string{"topic": "Single"}, []byte(body)), 0, "")
	if td := route(t, c, "Single"); td == nil || td.QueueDatas[0].WriteQueueNums != 2 {
		t.Fatalf("217 not applied: %+v", td)
	}
	unknown := strings.Replace(body, "broker-a", "broker-zz", 1)
	wantCode(t, do(t, c, remoting.RegisterTopicInNamesrv, map[string]string{"topic": "Ghost"}, []byte(unknown)), 0, "")
	if route(t, c, "Ghost") != nil {
		t.Fatal("217 for an unregistered broker was applied")
	}
}

func TestClusterInfoAndMemberGroup(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	register(t, c, brokerA())
	slave := brokerA()
	slave.ID, slave.Addr = 1, "10.0.0.2:10911"
	register(t, c, slave)
	resp := do(t, c, remoting.GetBrokerClusterInfo, nil, nil)
	want := `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	if string(resp.Body) != want {
		t.Errorf("106\n got %s\nwant %s", resp.Body, want)
	}
	resp = do(t, c, remoting.GetBrokerMemberGroup, map[string]string{"clusterName": "DefaultCluster", "brokerName": "broker-a"}, nil)
	if want := `{"brokerMemberGroup":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}}`; string(resp.Body) != want {
		t.Errorf("901 %s", resp.Body)
	}
}

func TestNamesrvConfig(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	resp := do(t, c, remoting.UpdateNamesrvConfig, nil, []byte("configStorePath=/tmp/x\nrocketmqHome=/evil\n"))
	if resp.Code != remoting.NoPermission || !strings.HasPrefix(resp.Remark, "Can not update config in black list.") {
		t.Fatalf("318 with dangerous keys: %v", resp)
	}
	wantCode(t, do(t, c, remoting.UpdateNamesrvConfig, nil, []byte("orderMessageEnable=maybe")), remoting.SystemError, "")
	// The whitelisted switch works: routes then carry orderTopicConf.
	register(t, c, brokerA())
	do(t, c, remoting.PutKVConfig, map[string]string{"namespace": "ORDER_TOPIC_CONFIG", "key": "TopicTest", "value": "broker-a:4"}, nil)
	if td := route(t, c, "TopicTest"); td.OrderTopicConf != "" {
		t.Fatalf("orderTopicConf before enabling: %q", td.OrderTopicConf)
	}
	wantCode(t, do(t, c, remoting.UpdateNamesrvConfig, nil, []byte("# mqadmin\norderMessageEnable=true\n")), 0, "")
	if td := route(t, c, "TopicTest"); td.OrderTopicConf != "broker-a:4" {
		t.Fatalf("orderTopicConf after enabling: %q", td.OrderTopicConf)
	}
	resp = do(t, c, remoting.GetNamesrvConfig, nil, nil)
	if !strings.Contains(string(resp.Body), "orderMessageEnable=true\n") || !strings.Contains(string(resp.Body), "scanNotActiveBrokerInterval=5000\n") {
		t.Errorf("319: %s", resp.Body)
	}
}

// A 5.x "nearby" query keeps the client's zone and groups without a master.
func TestZoneRoute(t *testing.T) {
	s := startServer(t, newFake())
	c := dial(t, s)
	east := brokerA()
	east.Zone = "east"
	west := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-w", Addr: "10.0.1.1:10911", Zone: "west",
		Topics: brokerA().Topics}
	headless := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-h", ID: 1, Addr: "10.0.2.2:10911", Zone: "west",
		Topics: brokerA().Topics, Version: 409}
	register(t, c, east)
	register(t, c, west)
	register(t, c, headless) // a 4.x slave defines no topics: give its group queues via 217
	body := `{"queueDatas":[{"brokerName":"broker-h","perm":4,"readQueueNums":1,"writeQueueNums":1}]}`
	do(t, c, remoting.RegisterTopicInNamesrv, map[string]string{"topic": "TopicTest"}, []byte(body))
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": "TopicTest", "__ZONE_MODE": "true", "__ZONE_NAME": "EAST"}, nil)
	resp := do(t, c, req.Code, req.ExtFields, nil)
	var td remoting.TopicRouteData
	if err := remoting.Unmarshal(resp.Body, &td); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range td.BrokerDatas {
		names = append(names, b.BrokerName)
	}
	if !reflect.DeepEqual(names, []string{"broker-a", "broker-h"}) || len(td.QueueDatas) != 2 || td.BrokerDatas[0].ZoneName != "east" {
		t.Fatalf("zone route %s", resp.Body)
	}
}
