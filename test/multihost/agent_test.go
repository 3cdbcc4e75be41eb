package multihost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/netns"
)

const (
	namecastPkg = "github.com/namecast/namecast/cmd/namecast"
	// httpAddr is the agent's default API address: loopback inside its own
	// host, reached from the test through the host's HTTP client.
	httpAddr = "127.0.0.1:7947"
	// gossipPort is the default gossip port every agent binds on 0.0.0.0.
	gossipPort = "7946"
	// startTimeout covers process start and binding, not cluster forming.
	startTimeout = 20 * time.Second
)

// agent is one namecast agent process in one lab host. Its node name is
// "h" plus the host's 1-based number, the numbering the scenarios use.
type agent struct {
	t    testing.TB
	bin  string
	host *netns.Host
	node string
	proc *netns.Proc
	api  *http.Client
}

func nodeName(h *netns.Host) string { return fmt.Sprintf("h%d", h.Index()+1) }

// startAgents starts one agent per host, each with the shared flags plus
// flags(i), and waits until all serve. They start together, as hosts
// booting at once would, so the slowest start bounds the wait.
func startAgents(t testing.TB, bin string, hosts []*netns.Host, flags func(i int) []string) []*agent {
	t.Helper()
	as := make([]*agent, len(hosts))
	for i, h := range hosts {
		as[i] = &agent{t: t, bin: bin, host: h, node: nodeName(h),
			api: &http.Client{Transport: h.HTTPClient().Transport, Timeout: 5 * time.Second}}
		as[i].launch(flags(i))
	}
	for _, a := range as {
		a.waitStarted()
	}
	return as
}

func (a *agent) launch(flags []string) {
	a.t.Helper()
	args := append([]string{"agent", "--node", a.node, "--http", httpAddr, "--rocketmq", "off", "--zookeeper", "off", "--nacos", "off", "--consul", "off", "--dns", "off"}, flags...)
	a.proc = a.host.Start(a.bin, args...)
}

func (a *agent) waitStarted() {
	a.t.Helper()
	if err := a.proc.WaitLog("agent started", startTimeout); err != nil {
		a.t.Fatal(err)
	}
}

// restart runs a new agent process in the same host with flags (the old one
// must have exited) and waits until it serves.
func (a *agent) restart(flags ...string) {
	a.t.Helper()
	select {
	case <-a.proc.Done():
	default:
		a.t.Fatalf("restart %s: the previous agent is still running", a.node)
	}
	a.launch(flags)
	a.waitStarted()
}

// gossipAddr is where this agent should be advertised: its host's lab
// address, found by the agent itself from its 0.0.0.0 bind.
func (a *agent) gossipAddr() string { return a.host.Addr() + ":" + gossipPort }

// call sends a JSON request to the agent's API and decodes a 200 answer
// into out; any other status is an error carrying the agent's message.
func (a *agent) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+httpAddr+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.api.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w", a.node, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w", a.node, method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &apiError{node: a.node, path: path, status: resp.StatusCode, body: string(bytes.TrimSpace(b))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

type apiError struct {
	node, path, body string
	status           int
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s: %s answered %d %s", e.node, e.path, e.status, e.body)
}

type member struct {
	Name   string            `json:"name"`
	Addr   string            `json:"addr"`
	Status string            `json:"status"`
	Tags   map[string]string `json:"tags"`
}

func (a *agent) members() ([]member, error) {
	var ms []member
	err := a.call("GET", "/v1/members", nil, &ms)
	return ms, err
}

// alive lists the names of the members this agent sees alive, sorted.
func (a *agent) alive() ([]string, error) {
	ms, err := a.members()
	var names []string
	for _, m := range ms {
		if m.Status == "alive" {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names, err
}

// registerBroker (re)registers this host's master broker, named after the
// node, serving topics. Its address is in the lab, though nothing dials it.
func (a *agent) registerBroker(port int, topics ...string) error {
	ts := map[string]any{}
	for _, topic := range topics {
		ts[topic] = map[string]int{"readQueueNums": 4, "writeQueueNums": 4, "perm": 6}
	}
	return a.call("PUT", "/v1/brokers", map[string]any{
		"cluster": "DefaultCluster", "brokerName": brokerName(a.node), "brokerId": 0,
		"addr": fmt.Sprintf("%s:%d", a.host.Addr(), port), "haAddr": "", "topics": ts,
	}, nil)
}

// registerAll has every agent replace its broker's topics with one named
// after itself and step, so waitTopics(topicsOf) proves each reached all.
func registerAll(t *testing.T, as []*agent, step string) {
	t.Helper()
	for _, a := range as {
		if err := a.registerBroker(10911, topicOf(a, step)); err != nil {
			t.Fatal(err)
		}
	}
}

func topicOf(a *agent, step string) string { return a.node + "-" + step }

func topicsOf(as []*agent, step string) []string {
	var out []string
	for _, a := range as {
		out = append(out, topicOf(a, step))
	}
	return out
}

func brokerName(node string) string { return "broker-" + node }

func (a *agent) topics() ([]string, error) {
	var out struct {
		Topics []string `json:"topics"`
	}
	err := a.call("GET", "/v1/topics", nil, &out)
	slices.Sort(out.Topics)
	return out.Topics, err
}

func names(as []*agent) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.node)
	}
	slices.Sort(out)
	return out
}
