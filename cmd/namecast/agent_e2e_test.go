package main

import (
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/agenttest"
)

// TestAgainstRealAgent runs the commands against an in-process agent, so a
// drift between the client and the agent's side of the contract shows.
func TestAgainstRealAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	cluster := agenttest.Start(t, 1)
	t.Setenv("NAMECAST_HTTP_ADDR", cluster.Agent(0).HTTPAddr())

	if out := ok(t, "members"); !strings.Contains(out, "agent-0") || !strings.Contains(out, "alive") {
		t.Errorf("members printed\n%s", out)
	}
	w := startWatch(t, "watch", "route", "TopicTest")
	w.stderr.waitFor(t, `no route for topic "TopicTest"`, 1)

	master := `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":0,"addr":"10.0.0.1:10911",
		"haAddr":"10.0.0.1:10912","topics":{"TopicTest":{"readQueueNums":4,"writeQueueNums":4,"perm":6}},"ttl":"120s"}`
	if r := run(t, master, "register", "broker", "--file", "-"); r.code != 0 {
		t.Fatalf("register broker: exit %d, stderr %q", r.code, r.stderr)
	}
	slave := `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":1,"addr":"10.0.0.2:10911"}`
	r := run(t, slave, "register", "broker", "--file", "-")
	if r.code != 0 || !strings.Contains(r.stdout, "master 10.0.0.1:10911, HA server 10.0.0.1:10912") {
		t.Fatalf("register slave: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	w.stdout.waitFor(t, "10.0.0.2:10911", 1)

	wantRoute := `BROKER    CLUSTER         ID  ADDR
broker-a  DefaultCluster  0   10.0.0.1:10911
broker-a  DefaultCluster  1   10.0.0.2:10911

BROKER    READ  WRITE  PERM
broker-a  4     4      RW-
`
	if out := ok(t, "route", "TopicTest"); out != wantRoute {
		t.Errorf("route printed\n%s\nwant\n%s", out, wantRoute)
	}
	wantTopics := `TOPIC      CLUSTERS        BROKERS   READ  WRITE  PERM
TopicTest  DefaultCluster  broker-a  4     4      RW-
`
	if out := ok(t, "topics"); out != wantTopics {
		t.Errorf("topics printed\n%s\nwant\n%s", out, wantTopics)
	}
	if out := ok(t, "clusters"); !strings.Contains(out, "DefaultCluster  broker-a  1   10.0.0.2:10911") {
		t.Errorf("clusters printed\n%s", out)
	}

	const url = "dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0&interface=com.foo.Bar"
	if out := ok(t, "register", "url", url, "--ttl", "30s"); !strings.Contains(out, "com.foo.Bar  providers") {
		t.Errorf("register url printed\n%s", out)
	}
	wantServices := `INTERFACE    PROVIDERS  CONSUMERS  APP-INSTANCES  APPLICATIONS  VERSIONS
com.foo.Bar  1          0          0              -             1.0.0
`
	if out := ok(t, "services"); out != wantServices {
		t.Errorf("services printed\n%s\nwant\n%s", out, wantServices)
	}
	wantProviders := `ADDRESS         PROTOCOL  APPLICATION  VERSION  GROUP  WEIGHT
10.0.0.5:20880  dubbo     -            1.0.0    -      100
`
	if out := ok(t, "services", "com.foo.Bar"); out != wantProviders {
		t.Errorf("services IFACE printed\n%s\nwant\n%s", out, wantProviders)
	}
	if out := ok(t, "services", "com.foo.Bar", "--urls"); out != "dubbo://10.0.0.5:20880/com.foo.Bar?interface=com.foo.Bar&version=1.0.0\n" {
		t.Errorf("services IFACE --urls printed %q", out)
	}
	ok(t, "unregister", "url", url)
	if r := run(t, "", "services", "com.foo.Bar"); r.code != 1 || !strings.Contains(r.stderr, "com.foo.Bar") {
		t.Errorf("after unregister url: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	ok(t, "unregister", "broker", "DefaultCluster", "broker-a", "0")
	ok(t, "unregister", "broker", "DefaultCluster", "broker-a", "1")
	w.stderr.waitFor(t, `no route for topic "TopicTest"`, 2)
	if code := w.stop(); code != 0 {
		t.Errorf("watch exited %d", code)
	}

	// The agent's own refusals come through verbatim.
	if r := run(t, "", "route", "bad/name"); r.code != 1 || !strings.Contains(r.stderr, `topic name "bad/name"`) {
		t.Errorf("bad topic: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, `{"cluster":"c"}`, "register", "broker", "--file", "-"); r.code != 1 || r.stderr == "" {
		t.Errorf("incomplete broker: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A registration that names no host says where nothing answers: every
// consumer would be handed a provider it cannot call. It is refused, and
// nothing is registered; a rule (dynamic=false) is not a registration.
func TestRegisterURLWithoutHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	cluster := agenttest.Start(t, 1)
	t.Setenv("NAMECAST_HTTP_ADDR", cluster.Agent(0).HTTPAddr())
	for _, url := range []string{"dubbo:///com.x.Y", "consumer:///com.x.Y?category=consumers"} {
		r := run(t, "", "register", "url", url)
		if r.code != 1 || !strings.Contains(r.stderr, "names no host") {
			t.Errorf("register url %s: exit %d, stderr %q; want it to say the URL names no host", url, r.code, r.stderr)
		}
	}
	if got := cluster.Agent(0).Table().URLs("com.x.Y", "providers"); len(got) != 0 {
		t.Errorf("refused URLs are served: %v", got)
	}
	if r := run(t, "", "register", "url", "override://0.0.0.0/com.x.Y?category=configurators&dynamic=false&timeout=100"); r.code != 0 {
		t.Errorf("a rule with host 0.0.0.0: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A URL that names no service is refused saying so. Before, the answer was
// "interface must be 1-255 characters, got 0".
func TestRegisterURLWithoutInterface(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	cluster := agenttest.Start(t, 1)
	t.Setenv("NAMECAST_HTTP_ADDR", cluster.Agent(0).HTTPAddr())
	for _, url := range []string{"http://not-dubbo", "dubbo://10.0.0.5:20880/"} {
		r := run(t, "", "register", "url", url)
		if r.code != 1 || !strings.Contains(r.stderr, "names no service") || !strings.Contains(r.stderr, "interface=") {
			t.Errorf("register url %s: exit %d, stderr %q; want it to say the URL names no service", url, r.code, r.stderr)
		}
	}
}
