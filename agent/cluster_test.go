package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// call makes an HTTP request to an agent and decodes the JSON answer.
func call(t testing.TB, method, addr, path string, body any, out any) (int, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+addr+path, rd)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if out != nil {
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, resp.Header
}

type route struct {
	QueueDatas  []map[string]any `json:"queueDatas"`
	BrokerDatas []struct {
		Cluster     string            `json:"cluster"`
		BrokerName  string            `json:"brokerName"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerDatas"`
}

func brokerReg(name, addr string, topics ...string) map[string]any {
	ts := map[string]any{}
	for _, topic := range topics {
		ts[topic] = map[string]int{"readQueueNums": 4, "writeQueueNums": 4, "perm": 6}
	}
	return map[string]any{"cluster": "DefaultCluster", "brokerName": name, "brokerId": 0, "addr": addr, "haAddr": "", "topics": ts}
}

// routeAddr is the master address agent a serves for topic, "" if none.
func routeAddr(t testing.TB, addr, topic string) string {
	var r route
	status, _ := call(t, "GET", addr, "/v1/topics/"+topic, nil, &r)
	if status != http.StatusOK || len(r.BrokerDatas) == 0 {
		return ""
	}
	return r.BrokerDatas[0].BrokerAddrs["0"]
}

func urlsOf(t testing.TB, addr, iface string) []string {
	var out struct {
		URLs []string `json:"urls"`
	}
	call(t, "GET", addr, "/v1/services/"+iface, nil, &out)
	return out.URLs
}

// everywhere waits until cond holds on every running agent of c.
func everywhere(t *testing.T, c *agenttest.Cluster, timeout time.Duration, cond func(httpAddr string) error) {
	t.Helper()
	testutil.Eventually(t, timeout, func() error {
		for _, i := range c.Running() {
			if err := cond(c.Agent(i).HTTPAddr()); err != nil {
				return fmt.Errorf("agent-%d: %w", i, err)
			}
		}
		return nil
	})
}

func wantRoute(t *testing.T, topic, want string) func(string) error {
	return func(addr string) error {
		if got := routeAddr(t, addr, topic); got != want {
			return fmt.Errorf("route of %s is %q, want %q", topic, got, want)
		}
		return nil
	}
}

func TestFiveAgentLifecycle(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 5)
	http0, http1 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr()

	// A broker registered on agent 0 and a URL on agent 1 reach all five.
	if status, _ := call(t, "PUT", http0, "/v1/brokers", brokerReg("broker-a", "10.1.0.1:10911", "Orders"), nil); status != 200 {
		t.Fatalf("register broker: %d", status)
	}
	const provider = "dubbo://10.1.0.9:20880/com.example.Greeter?version=1.0.0"
	if status, _ := call(t, "PUT", http1, "/v1/urls", map[string]string{"url": provider}, nil); status != 200 {
		t.Fatalf("register url: %d", status)
	}
	for i := 2; i <= 4; i++ {
		call(t, "PUT", c.Agent(i).HTTPAddr(), "/v1/brokers", brokerReg(fmt.Sprintf("broker-%d", i), fmt.Sprintf("10.1.0.%d:10911", 10+i), fmt.Sprintf("Topic%d", i)), nil)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if err := wantRoute(t, "Orders", "10.1.0.1:10911")(addr); err != nil {
			return err
		}
		if u := urlsOf(t, addr, "com.example.Greeter"); len(u) != 1 {
			return fmt.Errorf("providers of Greeter: %v", u)
		}
		for i := 2; i <= 4; i++ {
			if err := wantRoute(t, fmt.Sprintf("Topic%d", i), fmt.Sprintf("10.1.0.%d:10911", 10+i))(addr); err != nil {
				return err
			}
		}
		return nil
	})

	// Agent 2 crashes: its routes are withdrawn on every survivor.
	c.Crash(2)
	everywhere(t, c, 15*time.Second, wantRoute(t, "Topic2", ""))

	// Agent 3 leaves gracefully: withdrawn on every agent too, and reported
	// as left, not dead.
	c.Leave(3)
	everywhere(t, c, 10*time.Second, wantRoute(t, "Topic3", ""))
	everywhere(t, c, 10*time.Second, func(addr string) error {
		var members []struct{ Name, Status string }
		call(t, "GET", addr, "/v1/members", nil, &members)
		want := map[string]string{"agent-2": "dead", "agent-3": "left"}
		for _, m := range members {
			if w, ok := want[m.Name]; ok && m.Status != w {
				return fmt.Errorf("%s is %s, want %s", m.Name, m.Status, w)
			}
		}
		return nil
	})

	// Agent 4 restarts under its name and registers anew: its new records
	// replace the old, with no stale duplicate and no leftover topic.
	c.Restart(4)
	call(t, "PUT", c.Agent(4).HTTPAddr(), "/v1/brokers", brokerReg("broker-4", "10.1.0.99:10911", "Fresh"), nil)
	everywhere(t, c, 15*time.Second, func(addr string) error {
		if err := wantRoute(t, "Fresh", "10.1.0.99:10911")(addr); err != nil {
			return err
		}
		return wantRoute(t, "Topic4", "")(addr)
	})
	for _, i := range c.Running() {
		var clusters struct {
			BrokerAddrTable map[string]struct {
				BrokerAddrs map[string]string `json:"brokerAddrs"`
			} `json:"brokerAddrTable"`
		}
		call(t, "GET", c.Agent(i).HTTPAddr(), "/v1/clusters", nil, &clusters)
		if got := clusters.BrokerAddrTable["broker-4"].BrokerAddrs; len(got) != 1 || got["0"] != "10.1.0.99:10911" {
			t.Fatalf("agent-%d: broker-4 addresses %v, want only the restarted one", i, got)
		}
	}
	testutil.Eventually(t, 10*time.Second, c.Converged)
}

func TestBlockingQuery(t *testing.T) {
	c := agenttest.Start(t, 2)
	addr := c.Agent(1).HTTPAddr()
	_, h := call(t, "GET", addr, "/v1/topics", nil, &map[string]any{})
	index, err := strconv.ParseUint(h.Get("X-Namecast-Index"), 10, 64)
	if err != nil || index == 0 {
		t.Fatalf("X-Namecast-Index %q", h.Get("X-Namecast-Index"))
	}

	// Without a change the query returns at wait.
	start := time.Now()
	_, h2 := call(t, "GET", addr, "/v1/topics?index="+strconv.FormatUint(index, 10)+"&wait=300ms", nil, &map[string]any{})
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Fatalf("blocking query returned after %v without a change", el)
	}
	if h2.Get("X-Namecast-Index") != strconv.FormatUint(index, 10) {
		t.Fatalf("index moved without a change: %s -> %s", h.Get("X-Namecast-Index"), h2.Get("X-Namecast-Index"))
	}

	// A registration on the other agent wakes it well before wait.
	type answer struct {
		topics []string
		index  uint64
	}
	done := make(chan answer, 1)
	go func() {
		var out struct {
			Topics []string `json:"topics"`
		}
		_, h := call(t, "GET", addr, "/v1/topics?index="+strconv.FormatUint(index, 10)+"&wait=60s", nil, &out)
		i, _ := strconv.ParseUint(h.Get("X-Namecast-Index"), 10, 64)
		done <- answer{out.Topics, i}
	}()
	call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("b", "10.2.0.1:10911", "Wake"), nil)
	select {
	case a := <-done:
		if a.index <= index {
			t.Fatalf("index did not grow: %d -> %d", index, a.index)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking query did not return on a change")
	}
}

func TestTTLExpiresEverywhere(t *testing.T) {
	c := agenttest.Start(t, 3)
	reg := brokerReg("ttl-broker", "10.3.0.1:10911", "Ephemeral")
	reg["ttl"] = "1s"
	if status, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", reg, nil); status != 200 {
		t.Fatalf("register: %d", status)
	}
	u := "dubbo://10.3.0.2:20880/com.example.Ttl"
	call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/urls", map[string]string{"url": u, "ttl": "1s"}, nil)
	everywhere(t, c, 10*time.Second, wantRoute(t, "Ephemeral", "10.3.0.1:10911"))
	// Not renewed: gone on every agent.
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if err := wantRoute(t, "Ephemeral", "")(addr); err != nil {
			return err
		}
		if got := urlsOf(t, addr, "com.example.Ttl"); len(got) != 0 {
			return fmt.Errorf("url still served: %v", got)
		}
		return nil
	})
}

func TestTTLRenewedByReRegistration(t *testing.T) {
	c := agenttest.Start(t, 1)
	addr := c.Agent(0).HTTPAddr()
	reg := brokerReg("renewed", "10.4.0.1:10911", "Kept")
	reg["ttl"] = "1s"
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		call(t, "PUT", addr, "/v1/brokers", reg, nil)
		if routeAddr(t, addr, "Kept") == "" {
			t.Fatal("a registration renewed every few hundred ms expired")
		}
		// Renewal cadence is what is under test, not a wait for a condition.
		<-time.After(300 * time.Millisecond)
	}
	_ = url.QueryEscape
}

// A client still holding an index from before its agent restarted must not
// block for the whole wait: the new run's index starts over.
func TestBlockingQueryAfterRestartAnswersAtOnce(t *testing.T) {
	c := agenttest.Start(t, 1)
	for i := 0; i < 5; i++ {
		call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("r", "10.9.1.1:10911", fmt.Sprintf("T%d", i)), nil)
	}
	_, h := call(t, "GET", c.Agent(0).HTTPAddr(), "/v1/topics", nil, &map[string]any{})
	old := h.Get("X-Namecast-Index")
	c.Restart(0)
	done := make(chan string, 1)
	go func() {
		_, h := call(t, "GET", c.Agent(0).HTTPAddr(), "/v1/topics?index="+old+"&wait=60s", nil, &map[string]any{})
		done <- h.Get("X-Namecast-Index")
	}()
	select {
	case got := <-done:
		g, _ := strconv.ParseUint(got, 10, 64)
		o, _ := strconv.ParseUint(old, 10, 64)
		if g == 0 || g >= o {
			t.Fatalf("restarted agent answered index %s, want one below the old %s", got, old)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a blocking query with an index from the previous run waited for its whole wait")
	}
}
