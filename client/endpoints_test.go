package client

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The answers below are written as literal JSON from the README's HTTP API table, not
// produced by this package's types, so a field-name slip on either side
// shows.

func TestHealth(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/v1/health", `{"node":"n1","status":"leaving","members":3}`)
	h, _, err := f.client(t).Health(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Health{Node: "n1", Status: HealthLeaving, Members: 3}); h != want {
		t.Errorf("Health = %+v, want %+v", h, want)
	}
}

func TestMembers(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/v1/members", `[{"name":"n1","addr":"10.0.0.1:7946","status":"alive","tags":{"role":"broker"}},
		{"name":"n2","addr":"10.0.0.2:7946","status":"left","tags":{}}]`)
	ms, _, err := f.client(t).Members(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{
		{Name: "n1", Addr: "10.0.0.1:7946", Status: MemberAlive, Tags: map[string]string{"role": "broker"}},
		{Name: "n2", Addr: "10.0.0.2:7946", Status: MemberLeft, Tags: map[string]string{}},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("Members = %+v", ms)
	}
}

func TestJoinAndLeave(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.answerWrite("POST", "/v1/join", `{"joined":2}`)
	f.answerWrite("POST", "/v1/leave", `{"left":true}`)
	n, err := c.Join(context.Background(), "10.0.0.1:7946", "10.0.0.2:7946")
	if err != nil || n != 2 {
		t.Fatalf("Join = %d, %v", n, err)
	}
	assertRequest(t, f.next(t), "POST", "/v1/join", "", `{"addrs":["10.0.0.1:7946","10.0.0.2:7946"]}`)
	if err := c.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertRequest(t, f.next(t), "POST", "/v1/leave", "", "")
}

func TestMetrics(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/metrics", "# TYPE namecast_members gauge\nnamecast_members 3\n")
	text, err := f.client(t).Metrics(context.Background())
	if err != nil || text != "# TYPE namecast_members gauge\nnamecast_members 3\n" {
		t.Errorf("Metrics = %q, %v", text, err)
	}
}

func TestRegisterBroker(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.answerWrite("PUT", "/v1/brokers", `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":1,"addr":"10.0.0.2:10911",
		"haAddr":"10.0.0.2:10912","topics":["TopicTest"],"ttl":"2m0s","masterAddr":"10.0.0.1:10911","haServerAddr":"10.0.0.1:10912"}`)
	res, err := c.RegisterBroker(context.Background(), BrokerRegistration{
		Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 1,
		Addr: "10.0.0.2:10911", HAAddr: "10.0.0.2:10912",
		Topics: map[string]TopicConfig{"TopicTest": {ReadQueueNums: 4, WriteQueueNums: 4, Perm: PermRead | PermWrite}},
		TTL:    2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (RegisterBrokerResult{Cluster: "DefaultCluster", BrokerName: "broker-a", BrokerID: 1, Addr: "10.0.0.2:10911",
		HAAddr: "10.0.0.2:10912", Topics: []string{"TopicTest"}, TTL: "2m0s", MasterAddr: "10.0.0.1:10911", HAServerAddr: "10.0.0.1:10912"}); !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v", res)
	}
	assertRequest(t, f.next(t), "PUT", "/v1/brokers", "", `{"cluster":"DefaultCluster","brokerName":"broker-a",
		"brokerId":1,"addr":"10.0.0.2:10911","haAddr":"10.0.0.2:10912",
		"topics":{"TopicTest":{"readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}},"ttl":"120s"}`)

	// No TTL: the field is left out and the registration lives with the agent.
	if _, err := c.RegisterBroker(context.Background(), BrokerRegistration{Cluster: "c", BrokerName: "b", Addr: "h:1"}); err != nil {
		t.Fatal(err)
	}
	assertRequest(t, f.next(t), "PUT", "/v1/brokers", "",
		`{"cluster":"c","brokerName":"b","brokerId":0,"addr":"h:1","topics":null}`)
}

func TestUnregisterBrokerEscapesPath(t *testing.T) {
	f := newFakeAgent(t)
	f.answerWrite("DELETE", "/v1/brokers/c/1/b 2/3", `{"deleted":true}`)
	if err := f.client(t).UnregisterBroker(context.Background(), "c/1", "b 2", 3); err != nil {
		t.Fatal(err)
	}
	assertRequest(t, f.next(t), "DELETE", "/v1/brokers/c%2F1/b%202/3", "", "")
}

func TestTopicsAndRoute(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics", `{"topics":["%RETRY%g1","TopicTest"]}`)
	f.set("/v1/topics/%RETRY%g1", `{"queueDatas":[{"brokerName":"broker-a","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}],
		"brokerDatas":[{"cluster":"DefaultCluster","brokerName":"broker-a","brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"}}]}`)
	topics, _, err := c.Topics(context.Background(), nil)
	if err != nil || !reflect.DeepEqual(topics, []string{"%RETRY%g1", "TopicTest"}) {
		t.Fatalf("Topics = %v, %v", topics, err)
	}
	f.next(t)
	route, _, err := c.TopicRoute(context.Background(), "%RETRY%g1", nil)
	if err != nil {
		t.Fatal(err)
	}
	// RocketMQ's retry topics carry '%': it must reach the agent escaped.
	assertRequest(t, f.next(t), "GET", "/v1/topics/%25RETRY%25g1", "", "")
	want := TopicRoute{
		QueueDatas: []QueueData{{BrokerName: "broker-a", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}},
		BrokerDatas: []BrokerData{{Cluster: "DefaultCluster", BrokerName: "broker-a",
			BrokerAddrs: map[int64]string{0: "10.0.0.1:10911", 1: "10.0.0.2:10911"}}},
	}
	if !reflect.DeepEqual(route, want) {
		t.Errorf("TopicRoute = %+v", route)
	}
	_, _, err = c.TopicRoute(context.Background(), "Nope", nil)
	if !IsNotFound(err) {
		t.Errorf("unknown topic: %v", err)
	}
}

func TestClusters(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/v1/clusters", `{"brokerAddrTable":{"broker-a":{"cluster":"c1","brokerName":"broker-a","brokerAddrs":{"0":"h:1"}}},
		"clusterAddrTable":{"c1":["broker-a"]}}`)
	ci, _, err := f.client(t).Clusters(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ClusterInfo{
		BrokerAddrTable:  map[string]BrokerData{"broker-a": {Cluster: "c1", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: "h:1"}}},
		ClusterAddrTable: map[string][]string{"c1": {"broker-a"}},
	}
	if !reflect.DeepEqual(ci, want) {
		t.Errorf("Clusters = %+v", ci)
	}
}

func TestRegisterAndUnregisterURL(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	const raw = "dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0&interface=com.foo.Bar"
	const canonical = "dubbo://10.0.0.5:20880/com.foo.Bar?interface=com.foo.Bar&version=1.0.0"
	f.answerWrite("PUT", "/v1/urls", `{"url":"`+canonical+`","interface":"com.foo.Bar","category":"providers"}`)
	f.answerWrite("DELETE", "/v1/urls", `{"deleted":true}`)
	reg, err := c.RegisterURL(context.Background(), raw, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if reg != (RegisteredURL{URL: canonical, Interface: "com.foo.Bar", Category: CategoryProviders}) {
		t.Errorf("RegisterURL = %+v", reg)
	}
	assertRequest(t, f.next(t), "PUT", "/v1/urls", "", `{"url":"`+raw+`","ttl":"30s"}`)
	if _, err := c.RegisterURL(context.Background(), raw, 0); err != nil {
		t.Fatal(err)
	}
	assertRequest(t, f.next(t), "PUT", "/v1/urls", "", `{"url":"`+raw+`"}`)

	if err := c.UnregisterURL(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	r := f.next(t)
	assertRequest(t, r, "DELETE", "/v1/urls", "url=dubbo%3A%2F%2F10.0.0.5%3A20880%2Fcom.foo.Bar%3Fversion%3D1.0.0%26interface%3Dcom.foo.Bar", "")
	if r.Query.Get("url") != raw {
		t.Errorf("agent read url=%q", r.Query.Get("url"))
	}
}

func TestServicesAndURLs(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/services", `{"services":["com.foo.Bar"]}`)
	f.set("/v1/services/com.foo.Bar?category=providers", `{"urls":["dubbo://h:1/com.foo.Bar"]}`)
	f.set("/v1/services/com.foo.Bar", `{"urls":["dubbo://h:1/com.foo.Bar","consumer://h:2/com.foo.Bar"]}`)
	svcs, _, err := c.Services(context.Background(), nil)
	if err != nil || !reflect.DeepEqual(svcs, []string{"com.foo.Bar"}) {
		t.Fatalf("Services = %v, %v", svcs, err)
	}
	f.next(t)
	urls, _, err := c.URLs(context.Background(), "com.foo.Bar", CategoryProviders, nil)
	if err != nil || !reflect.DeepEqual(urls, []string{"dubbo://h:1/com.foo.Bar"}) {
		t.Fatalf("URLs = %v, %v", urls, err)
	}
	assertRequest(t, f.next(t), "GET", "/v1/services/com.foo.Bar", "category=providers", "")
	urls, _, err = c.URLs(context.Background(), "com.foo.Bar", "", nil)
	if err != nil || len(urls) != 2 {
		t.Fatalf("URLs without category = %v, %v", urls, err)
	}
	assertRequest(t, f.next(t), "GET", "/v1/services/com.foo.Bar", "", "")
	if _, _, err := c.URLs(context.Background(), "com.foo.Nope", "", nil); !IsNotFound(err) {
		t.Errorf("unknown interface: %v", err)
	}
}

func TestBrokerRegistrationFromFile(t *testing.T) {
	var reg BrokerRegistration
	err := json.Unmarshal([]byte(`{"cluster":"c","brokerName":"b","brokerId":2,"addr":"h:1",
		"topics":{"T":{"readQueueNums":8,"writeQueueNums":8,"perm":6}},"ttl":"90s"}`), &reg)
	if err != nil {
		t.Fatal(err)
	}
	want := BrokerRegistration{Cluster: "c", BrokerName: "b", BrokerID: 2, Addr: "h:1",
		Topics: map[string]TopicConfig{"T": {ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}}, TTL: 90 * time.Second}
	if !reflect.DeepEqual(reg, want) {
		t.Errorf("decoded %+v", reg)
	}
	for _, bad := range []string{
		`{"cluster":"c","broker_id":1}`,                   // misspelt key
		`{"cluster":"c","topics":{"T":{"readQueues":1}}}`, // misspelt nested key
		`{"cluster":"c","ttl":"soon"}`, `{"cluster":"c","ttl":"-1s"}`,
	} {
		if err := json.Unmarshal([]byte(bad), new(BrokerRegistration)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	// What it encodes, it decodes.
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var back BrokerRegistration
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("round trip %s: %+v, %v", b, back, err)
	}
}

// assertRequest checks a request's method, escaped path, raw query and,
// unless body is empty, that its JSON body means the same as body.
func assertRequest(t *testing.T, r fakeRequest, method, path, query, body string) {
	t.Helper()
	if r.Method != method || r.EscapedPath != path || r.RawQuery != query {
		t.Errorf("request %s %s?%s, want %s %s?%s", r.Method, r.EscapedPath, r.RawQuery, method, path, query)
	}
	if body == "" {
		if r.Body != "" {
			t.Errorf("%s %s: unexpected body %s", method, path, r.Body)
		}
		return
	}
	var got, want any
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
		t.Fatalf("%s %s: body %q: %v", method, path, r.Body, err)
	}
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		t.Fatalf("bad test body %q: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s %s: body %s, want %s", method, path, r.Body, body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
}

func TestKeyring(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.answerWrite("POST", "/v1/keys", `{"members":2,"failed":{"n2":"no answer within 5s"},
		"keys":{"k1":1},"primary":{"k1":1},"answered":["n1"]}`)
	want := KeyringResult{Members: 2, Failed: map[string]string{"n2": "no answer within 5s"},
		Keys: map[string]int{"k1": 1}, Primary: map[string]int{"k1": 1}, Answered: []string{"n1"}}
	for _, tt := range []struct {
		call func() (KeyringResult, error)
		body string
	}{
		{func() (KeyringResult, error) { return c.KeyringList(context.Background()) }, `{"op":"list"}`},
		{func() (KeyringResult, error) { return c.KeyringInstall(context.Background(), "k2") }, `{"op":"install","key":"k2"}`},
		{func() (KeyringResult, error) { return c.KeyringUse(context.Background(), "k2") }, `{"op":"use","key":"k2"}`},
		{func() (KeyringResult, error) { return c.KeyringRemove(context.Background(), "k1") }, `{"op":"remove","key":"k1"}`},
	} {
		res, err := tt.call()
		if err != nil || !reflect.DeepEqual(res, want) {
			t.Errorf("%s: %+v, %v", tt.body, res, err)
		}
		assertRequest(t, f.next(t), "POST", "/v1/keys", "", tt.body)
	}
}
