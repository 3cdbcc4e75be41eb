package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

const routeJSON = `{"queueDatas":[{"brokerName":"broker-b","readQueueNums":8,"writeQueueNums":8,"perm":6,"topicSysFlag":0},
	{"brokerName":"broker-a","readQueueNums":4,"writeQueueNums":0,"perm":4,"topicSysFlag":0}],
 "brokerDatas":[{"cluster":"c1","brokerName":"broker-b","brokerAddrs":{"1":"10.0.0.4:10911","0":"10.0.0.3:10911"}},
	{"cluster":"c1","brokerName":"broker-a","brokerAddrs":{"0":"10.0.0.1:10911"}}]}`

func TestMembers(t *testing.T) {
	f := newFakeAgent(t)
	since := time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339Nano)
	body := `[{"name":"n2","addr":"10.0.0.2:7946","status":"suspect","tags":{},"since":"` + since + `"},
		{"name":"n1","addr":"10.0.0.1:7946","status":"alive","tags":{"zone":"a","role":"broker"},"since":"0001-01-01T00:00:00Z"}]`
	f.on("GET /v1/members", 200, body)
	want := `NAME  ADDR           STATUS   SINCE  TAGS
n1    10.0.0.1:7946  alive    -      role=broker,zone=a
n2    10.0.0.2:7946  suspect  1m     -
`
	if out := ok(t, "members", "--http", f.addr()); out != want {
		t.Errorf("members printed\n%s\nwant\n%s", out, want)
	}
	// --http PORT is that port on 127.0.0.1, where an agent beside the
	// operator listens.
	_, port, _ := net.SplitHostPort(f.addr())
	if out := ok(t, "members", "--http", port); out != want {
		t.Errorf("members --http %s printed\n%s\nwant\n%s", port, out, want)
	}
	// --json keeps every field the agent sent, since among them.
	assertJSON(t, ok(t, "members", "--http", f.addr(), "--json"), body)
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now.Add(time.Second), "0s"},
		{now.Add(-45 * time.Second), "45s"},
		{now.Add(-12*time.Minute - 59*time.Second), "12m"},
		{now.Add(-5 * time.Hour), "5h"},
		{now.Add(-72 * time.Hour), "3d"},
	} {
		if got := ago(tt.t, now); got != tt.want {
			t.Errorf("ago(%v) = %q, want %q", now.Sub(tt.t), got, tt.want)
		}
	}
}

const topicsJSON = `{"topics":[{"topic":"%RETRY%g1","clusters":["c1"],"brokers":["broker-a"],"readQueues":1,"writeQueues":1,"perms":[6]},
	{"topic":"TopicTest","clusters":["c1","c2"],"brokers":["broker-a","broker-b"],"readQueues":8,"writeQueues":4,"perms":[4,6]}]}`

func TestTopics(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/topics", 200, topicsJSON)
	want := `TOPIC      CLUSTERS  BROKERS            READ  WRITE  PERM
%RETRY%g1  c1        broker-a           1     1      RW-
TopicTest  c1,c2     broker-a,broker-b  8     4      R--,RW-
`
	if out := ok(t, "topics", "--http", f.addr()); out != want {
		t.Errorf("topics printed\n%s\nwant\n%s", out, want)
	}
	if q := f.last(t).query; q != "detail=" {
		t.Errorf("topics asked %q, want detail", q)
	}
	assertJSON(t, ok(t, "topics", "--http", f.addr(), "--json"), topicsJSON)
}

func TestRoute(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/topics/%RETRY%g1", 200, routeJSON)
	// Brokers stay in the agent's order (nearest first); ids ascend.
	want := `BROKER    CLUSTER  ID  ADDR
broker-b  c1       0   10.0.0.3:10911
broker-b  c1       1   10.0.0.4:10911
broker-a  c1       0   10.0.0.1:10911

BROKER    READ  WRITE  PERM
broker-b  8     8      RW-
broker-a  4     0      R--
`
	if out := ok(t, "route", "%RETRY%g1", "--http", f.addr()); out != want {
		t.Errorf("route printed\n%s\nwant\n%s", out, want)
	}
	if p := f.last(t).path; p != "/v1/topics/%25RETRY%25g1" {
		t.Errorf("asked %s", p)
	}
	assertJSON(t, ok(t, "route", "%RETRY%g1", "--http", f.addr(), "--json"), routeJSON)
}

func TestRouteOfUnknownTopic(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/topics/Nope", 404, `{"error":"no route for topic \"Nope\": no live broker registers it"}`)
	r := run(t, "", "route", "Nope", "--http", f.addr())
	if r.code != 1 || r.stdout != "" || r.stderr != "namecast route: no route for topic \"Nope\": no live broker registers it\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestClusters(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/clusters", 200, `{"brokerAddrTable":{
		"broker-b":{"cluster":"c1","brokerName":"broker-b","brokerAddrs":{"0":"h:3"}},
		"broker-a":{"cluster":"c1","brokerName":"broker-a","brokerAddrs":{"1":"h:2","0":"h:1"}},
		"x":{"cluster":"c0","brokerName":"x","brokerAddrs":{"0":"h:9"}}},
		"clusterAddrTable":{"c0":["x"],"c1":["broker-a","broker-b"]}}`)
	want := `CLUSTER  BROKER    ID  ADDR
c0       x         0   h:9
c1       broker-a  0   h:1
c1       broker-a  1   h:2
c1       broker-b  0   h:3
`
	if out := ok(t, "clusters", "--http", f.addr()); out != want {
		t.Errorf("clusters printed\n%s\nwant\n%s", out, want)
	}
	var ci map[string]any
	if err := json.Unmarshal([]byte(ok(t, "clusters", "--json", "--http", f.addr())), &ci); err != nil || ci["clusterAddrTable"] == nil {
		t.Errorf("clusters --json: %v %v", ci, err)
	}
}

func TestServices(t *testing.T) {
	f := newFakeAgent(t)
	services := `{"services":[{"interface":"com.foo.Bar","providers":2,"consumers":1,"appInstances":0,"applications":["app-a","web"],"versions":["1"]},
		{"interface":"com.foo.Baz","providers":0,"consumers":0,"appInstances":3,"applications":["greeter"],"versions":[]}]}`
	f.on("GET /v1/services", 200, services)
	f.on("GET /v1/services/com.foo.Bar", 200, `{"urls":["dubbo://h:1/com.foo.Bar?version=1&application=app-a&weight=50","tri://h:2/com.foo.Bar?version=1&group=g"]}`)
	want := `INTERFACE    PROVIDERS  CONSUMERS  APP-INSTANCES  APPLICATIONS  VERSIONS
com.foo.Bar  2          1          0              app-a,web     1
com.foo.Baz  0          0          3              greeter       -
`
	if out := ok(t, "services", "--http", f.addr()); out != want {
		t.Errorf("services printed\n%s\nwant\n%s", out, want)
	}
	assertJSON(t, ok(t, "services", "--json", "--http", f.addr()), services)
	want = `ADDRESS  PROTOCOL  APPLICATION  VERSION  GROUP  WEIGHT
h:1      dubbo     app-a        1        -      50
h:2      tri       -            1        g      100
`
	if out := ok(t, "services", "com.foo.Bar", "--http", f.addr()); out != want {
		t.Errorf("services IFACE printed\n%s\nwant\n%s", out, want)
	}
	if q := f.last(t).query; q != "category=providers" {
		t.Errorf("default category sent as %q", q)
	}
	if out := ok(t, "services", "com.foo.Bar", "--urls", "--http", f.addr()); out != "dubbo://h:1/com.foo.Bar?version=1&application=app-a&weight=50\ntri://h:2/com.foo.Bar?version=1&group=g\n" {
		t.Errorf("services IFACE --urls printed %q", out)
	}
	ok(t, "services", "com.foo.Bar", "--category", "routers", "--http", f.addr())
	if q := f.last(t).query; q != "category=routers" {
		t.Errorf("--category sent as %q", q)
	}
	assertJSON(t, ok(t, "services", "com.foo.Bar", "--json", "--http", f.addr()), `{"urls":["dubbo://h:1/com.foo.Bar?version=1&application=app-a&weight=50","tri://h:2/com.foo.Bar?version=1&group=g"]}`)
}

func TestUnreachableAgent(t *testing.T) {
	addr := deadAddr(t)
	want := "namecast members: cannot reach the namecast agent at " + addr +
		": connection refused (is `namecast agent` running? set --http or NAMECAST_HTTP_ADDR)\n"
	if r := run(t, "", "members", "--http", addr); r.code != 1 || r.stderr != want {
		t.Errorf("exit %d, stderr\n%q\nwant\n%q", r.code, r.stderr, want)
	}
	// The environment variable is the default address.
	t.Setenv("NAMECAST_HTTP_ADDR", addr)
	if r := run(t, "", "topics"); r.code != 1 || !strings.Contains(r.stderr, "at "+addr+": connection refused") {
		t.Errorf("with NAMECAST_HTTP_ADDR: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestEnvAddress(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/topics", 200, topicsJSON)
	t.Setenv("NAMECAST_HTTP_ADDR", f.srv.URL) // the http:// form works too
	if out := ok(t, "topics"); !strings.Contains(out, "TopicTest") {
		t.Errorf("topics printed %q", out)
	}
}

// assertJSON checks that got is JSON meaning the same as want.
func assertJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("JSON output\n%s\nwant\n%s", gb, wb)
	}
}

// --json prints URLs as they are: & stays &, not \u0026, so the output can
// be read by eye and grepped. Before, every & of a Dubbo URL was escaped.
func TestJSONDoesNotEscapeAmpersands(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/services/com.foo.Bar", 200, `{"urls":["dubbo://h:1/com.foo.Bar?side=provider&version=1"]}`)
	out := ok(t, "services", "com.foo.Bar", "--json", "--http", f.addr())
	if !strings.Contains(out, "side=provider&version=1") || strings.Contains(out, `\u0026`) {
		t.Errorf("--json printed %q", out)
	}
}
