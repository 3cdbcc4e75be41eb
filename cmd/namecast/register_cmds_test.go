package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const brokerFile = `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":1,"addr":"10.0.0.2:10911",
	"topics":{"TopicTest":{"readQueueNums":4,"writeQueueNums":4,"perm":6}},"ttl":"120s"}`

func TestRegisterBroker(t *testing.T) {
	f := newFakeAgent(t)
	f.on("PUT /v1/brokers", 200, `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":1,"addr":"10.0.0.2:10911","topics":["TopicTest"],"ttl":"1m30s","masterAddr":"10.0.0.1:10911","haServerAddr":"10.0.0.1:10912"}`)
	file := filepath.Join(t.TempDir(), "broker.json")
	if err := os.WriteFile(file, []byte(brokerFile), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "registered broker broker-a id 1 in cluster DefaultCluster with 1 topic\nmaster 10.0.0.1:10911, HA server 10.0.0.1:10912\n"
	if out := ok(t, "register", "broker", "--file", file, "--http", f.addr()); out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
	assertJSON(t, f.last(t).body, strings.Replace(brokerFile, `"perm":6}`, `"perm":6,"topicSysFlag":0}`, 1))

	// - reads stdin; --ttl overrides the file's.
	r := run(t, brokerFile, "register", "broker", "--file", "-", "--ttl", "90s", "--json", "--http", f.addr())
	if r.code != 0 {
		t.Fatalf("from stdin: exit %d, stderr %q", r.code, r.stderr)
	}
	assertJSON(t, r.stdout, `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":1,"addr":"10.0.0.2:10911","topics":["TopicTest"],"ttl":"1m30s","masterAddr":"10.0.0.1:10911","haServerAddr":"10.0.0.1:10912"}`)
	if body := f.last(t).body; !strings.Contains(body, `"ttl":"90s"`) {
		t.Errorf("--ttl not sent: %s", body)
	}
}

func TestRegisterBrokerBadFile(t *testing.T) {
	f := newFakeAgent(t)
	for _, tt := range []struct{ stdin, want string }{
		{`{"cluster":"c","broker_id":1}`, `stdin is not a broker registration: json: unknown field "broker_id"`},
		{`{"cluster":`, "stdin is not a broker registration"},
		{`{"ttl":"soon"}`, `bad ttl "soon"`},
	} {
		r := run(t, tt.stdin, "register", "broker", "--file", "-", "--http", f.addr())
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tt.stdin, r.code, r.stderr, tt.want)
		}
	}
	r := run(t, "", "register", "broker", "--file", filepath.Join(t.TempDir(), "missing.json"), "--http", f.addr())
	if r.code != 1 || !strings.Contains(r.stderr, "reading the registration") {
		t.Errorf("missing file: exit %d, stderr %q", r.code, r.stderr)
	}
	if len(f.requests()) != 0 {
		t.Errorf("a bad file reached the agent: %+v", f.requests())
	}
}

func TestRegisterURL(t *testing.T) {
	f := newFakeAgent(t)
	const raw = "dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0&interface=com.foo.Bar"
	const canonical = "dubbo://10.0.0.5:20880/com.foo.Bar?interface=com.foo.Bar&version=1.0.0"
	f.on("PUT /v1/urls", 200, `{"url":"`+canonical+`","interface":"com.foo.Bar","category":"providers"}`)
	want := "registered " + canonical + "\nINTERFACE    CATEGORY   EXPIRES\ncom.foo.Bar  providers  unless renewed within 30s\n"
	if out := ok(t, "register", "url", raw, "--ttl", "30s", "--http", f.addr()); out != want {
		t.Errorf("printed\n%s\nwant\n%s", out, want)
	}
	assertJSON(t, f.last(t).body, `{"url":"`+raw+`","ttl":"30s"}`)
	if out := ok(t, "register", "url", "--http", f.addr(), raw); !strings.Contains(out, "with the agent") {
		t.Errorf("without --ttl printed %q", out)
	}
	assertJSON(t, f.last(t).body, `{"url":"`+raw+`"}`)
}

func TestUnregister(t *testing.T) {
	f := newFakeAgent(t)
	f.on("DELETE /v1/brokers/DefaultCluster/broker-a/1", 200, `{"deleted":true}`)
	f.on("DELETE /v1/urls", 200, `{"deleted":true}`)
	if out := ok(t, "unregister", "broker", "DefaultCluster", "broker-a", "1", "--http", f.addr()); out != "unregistered broker broker-a id 1 in cluster DefaultCluster\n" {
		t.Errorf("printed %q", out)
	}
	if r := f.last(t); r.method != "DELETE" {
		t.Errorf("sent %s", r.method)
	}
	assertJSON(t, ok(t, "unregister", "url", "dubbo://h:1/x?a=1&b=2", "--json", "--http", f.addr()), `{"deleted":true}`)
	if q := f.last(t).query; q != "url=dubbo%3A%2F%2Fh%3A1%2Fx%3Fa%3D1%26b%3D2" {
		t.Errorf("sent query %q", q)
	}
	r := run(t, "", "unregister", "broker", "c", "b", "7", "--http", f.addr())
	if r.code != 1 || !strings.Contains(r.stderr, "namecast unregister: no such endpoint") {
		t.Errorf("unknown broker: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestWriteRefusals(t *testing.T) {
	f := newFakeAgent(t)
	f.on("PUT /v1/urls", 403, `{"error":"write calls need the agent's token: send Authorization: Bearer <token>"}`)
	r := run(t, "", "register", "url", "dubbo://h:1/x", "--http", f.addr(), "--token", "s3cret")
	if r.code != 1 || !strings.HasSuffix(r.stderr, "(set --token or NAMECAST_HTTP_TOKEN)\n") {
		t.Errorf("403: exit %d, stderr %q", r.code, r.stderr)
	}
	if got := f.last(t).header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("token sent as %q", got)
	}
	f.on("PUT /v1/urls", 503, `{"error":"agent is leaving the cluster; register with another agent"}`)
	r = run(t, "", "register", "url", "dubbo://h:1/x", "--http", f.addr())
	if r.code != 1 || r.stderr != "namecast register: agent is leaving the cluster; register with another agent\n" {
		t.Errorf("503: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestJoinAndLeave(t *testing.T) {
	f := newFakeAgent(t)
	f.on("POST /v1/join", 200, `{"joined":1}`)
	f.on("POST /v1/leave", 200, `{"left":true}`)
	if out := ok(t, "join", "10.0.0.1:7946", "10.0.0.2:7946", "--http", f.addr()); out != "joined 1 of 2\n" {
		t.Errorf("join printed %q", out)
	}
	assertJSON(t, f.last(t).body, `{"addrs":["10.0.0.1:7946","10.0.0.2:7946"]}`)
	if out := ok(t, "leave", "--http", f.addr()); !strings.Contains(out, "is leaving the cluster") {
		t.Errorf("leave printed %q", out)
	}
	if r := f.last(t); r.method != "POST" || r.path != "/v1/leave" {
		t.Errorf("leave sent %s %s", r.method, r.path)
	}
}

func TestKeys(t *testing.T) {
	f := newFakeAgent(t)
	f.on("POST /v1/keys", 200, `{"members":2,"failed":{},"keys":{"sha256:01":2,"sha256:02":1},"primary":{"sha256:01":2},"answered":["n1","n2"]}`)
	want := "FINGERPRINT  MEMBERS  PRIMARY\nsha256:01    2/2      2\nsha256:02    1/2      0\n"
	if out := ok(t, "keys", "list", "--http", f.addr()); out != want {
		t.Errorf("keys list printed\n%s\nwant\n%s", out, want)
	}
	assertJSON(t, f.last(t).body, `{"op":"list"}`)
	// The fingerprint of 32 zero bytes, as sha256sum prints it.
	zeros := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	if out := ok(t, "keys", "install", zeros, "--http", f.addr()); out != "install sha256:66687aadf862bd77: 2 of 2 members\n" {
		t.Errorf("keys install printed %q", out)
	}
	assertJSON(t, f.last(t).body, `{"op":"install","key":"`+zeros+`"}`)

	// A member that did not apply the change fails the command.
	f.on("POST /v1/keys", 200, `{"members":2,"failed":{"n2":"no answer within 5s"},"keys":{},"primary":{},"answered":["n1"]}`)
	r := run(t, "", "keys", "use", "k2", "--http", f.addr())
	if r.code != 1 || !strings.Contains(r.stderr, "member n2: no answer within 5s") || !strings.Contains(r.stderr, "1 of 2 members did not use the key") {
		t.Errorf("partial failure: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A dynamic=false URL is a cluster-wide rule that outlives the agent: the
// answer says so. It said "with the agent", as for a registration.
func TestRegisterRuleURLSaysItOutlivesTheAgent(t *testing.T) {
	f := newFakeAgent(t)
	const rule = "condition://0.0.0.0/com.foo.Bar?category=routers&dynamic=false&rule=abc"
	f.on("PUT /v1/urls", 200, `{"url":"`+rule+`","interface":"com.foo.Bar","category":"routers"}`)
	out := ok(t, "register", "url", rule, "--http", f.addr())
	if strings.Contains(out, "with the agent") || !strings.Contains(out, "until deleted") {
		t.Errorf("a dynamic=false URL printed\n%s\nwant it to say it stays until deleted", out)
	}
}
