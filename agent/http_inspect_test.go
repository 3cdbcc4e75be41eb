package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/internal/testutil"
)

// TestInspectionEndpoints reads, on agent 2, what was registered through
// agents 0 and 1: records per origin, brokers with the agent each came
// through, rules in write order with their writer, coordinates and RTTs,
// and this agent's own description with secrets redacted.
func TestInspectionEndpoints(t *testing.T) {
	const token, key = "tok-do-not-show", "c2VjcmV0LWtleS0xMjM0NQ=="
	c := agenttest.Start(t, 3, func(cfg *agent.Config) { cfg.HTTPToken, cfg.EncryptKey = token, key })
	a0, a1, a2 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr(), c.Agent(2).HTTPAddr()
	auth := map[string]string{"Authorization": "Bearer " + token}
	put := func(addr, path string, body any) {
		t.Helper()
		if status := callWith(t, "PUT", addr, path, body, auth); status != 200 {
			t.Fatalf("PUT %s: %d", path, status)
		}
	}
	put(a0, "/v1/brokers", brokerReg("b0", "192.0.2.1:10911", "T0"))
	put(a1, "/v1/brokers", brokerReg("b1", "192.0.2.2:10911", "T1"))
	put(a1, "/v1/urls", map[string]string{"url": "override://0.0.0.0/com.example.S?category=configurators&dynamic=false&timeout=1"})
	// The second rule is written where the first is known, so it is
	// ordered after it whatever the two agents' clocks said before.
	testutil.Eventually(t, 10*time.Second, func() error {
		var rules struct{ Rules []httpapi.Rule }
		call(t, "GET", a0, "/v1/rules", nil, &rules)
		if len(rules.Rules) != 1 {
			return fmt.Errorf("agent-0 holds %d rules, want 1", len(rules.Rules))
		}
		return nil
	})
	put(a0, "/v1/urls", map[string]string{"url": "override://0.0.0.0/com.example.S?category=configurators&dynamic=false&timeout=2"})

	testutil.Eventually(t, 10*time.Second, func() error {
		var origins []struct {
			Origin  string `json:"origin"`
			Records int    `json:"records"`
		}
		call(t, "GET", a2, "/v1/origins", nil, &origins)
		got := map[string]int{}
		for _, o := range origins {
			got[o.Origin] = o.Records
		}
		if got["agent-0"] != 2 || got["agent-1"] != 2 || got["~rules"] != 2 || got["agent-2"] != 0 {
			return fmt.Errorf("records by origin on agent-2: %v", got)
		}
		return nil
	})

	var brokers struct {
		Brokers []httpapi.BrokerEntry `json:"brokers"`
	}
	call(t, "GET", a2, "/v1/brokers", nil, &brokers)
	if b := brokers.Brokers; len(b) != 2 || b[0].BrokerName != "b0" || b[0].Origin != "agent-0" || b[1].Origin != "agent-1" || b[1].Addr != "192.0.2.2:10911" {
		t.Errorf("brokers on agent-2: %+v", b)
	}

	var rules struct {
		Rules []httpapi.Rule `json:"rules"`
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		call(t, "GET", a2, "/v1/rules", nil, &rules)
		if len(rules.Rules) != 2 {
			return fmt.Errorf("agent-2 holds %d rules, want 2", len(rules.Rules))
		}
		return nil
	})
	if r := rules.Rules; len(r) != 2 || !strings.HasPrefix(r[0].Writer, "agent-1@") || !strings.HasPrefix(r[1].Writer, "agent-0@") ||
		r[0].Time >= r[1].Time || r[0].Kind != "url" || r[0].Category != "configurators" || !strings.Contains(r[1].URL, "timeout=2") {
		t.Errorf("rules on agent-2, want agent-1's then agent-0's: %+v", r)
	}

	testutil.Eventually(t, 10*time.Second, func() error {
		var coords []httpapi.MemberCoordinate
		call(t, "GET", a2, "/v1/coordinates", nil, &coords)
		if len(coords) != 3 || coords[0].Name != "agent-2" || coords[0].RTTms == nil || *coords[0].RTTms != 0 {
			return fmt.Errorf("coordinates: %+v", coords)
		}
		for _, mc := range coords[1:] {
			if mc.Coord == nil || mc.RTTms == nil || *mc.RTTms <= 0 || len(mc.Coord.Vec) == 0 {
				return fmt.Errorf("no estimate yet for %s", mc.Name)
			}
		}
		return nil
	})

	var info httpapi.AgentInfo
	status, _ := call(t, "GET", a2, "/v1/agent", nil, &info)
	raw := get(t, a2, "/v1/agent")
	if status != 200 || info.Node != "agent-2" || info.Incarnation == 0 || info.Version == "" {
		t.Errorf("agent info: %d %+v", status, info)
	}
	// Every door's listeners, each under its own key.
	var addrs map[string]any
	if err := json.Unmarshal([]byte(raw), &addrs); err != nil {
		t.Fatal(err)
	}
	for key, name := range map[string]string{"httpAddr": "http", "rocketmqAddr": "rocketmq", "zookeeperAddr": "zookeeper",
		"nacosAddr": "nacos", "nacosGrpcAddr": "nacos-grpc"} {
		if want := c.Agent(2).Addr(name); want == "" || addrs[key] != want {
			t.Errorf("/v1/agent %s = %v, want the %s listener's address %q", key, addrs[key], name, want)
		}
	}
	var cfg map[string]any
	if err := json.Unmarshal(info.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, token) || strings.Contains(raw, key) || cfg["http_token"] != "<redacted>" || cfg["encrypt"] != "<redacted>" || cfg["node"] != "agent-2" {
		t.Errorf("secrets not redacted: %s", raw)
	}
}

// TestIndexWakesOnAnyChange: /v1/index blocks until the cluster changes.
func TestIndexWakesOnAnyChange(t *testing.T) {
	c := agenttest.Start(t, 2)
	a0, a1 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr()
	var first struct{ Index uint64 }
	call(t, "GET", a1, "/v1/index", nil, &first)
	done := make(chan uint64, 1)
	go func() {
		var next struct{ Index uint64 }
		res, err := http.Get(fmt.Sprintf("http://%s/v1/index?index=%d&wait=30s", a1, first.Index))
		if err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			fmt.Sscanf(strings.TrimPrefix(string(b), `{"index":`), "%d", &next.Index)
		}
		done <- next.Index
	}()
	call(t, "PUT", a0, "/v1/brokers", brokerReg("b", "192.0.2.1:10911", "T"), nil)
	select {
	case got := <-done:
		if got <= first.Index {
			t.Fatalf("index after a change on another agent: %d, was %d", got, first.Index)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking /v1/index did not wake on a registration elsewhere")
	}
}

// TestUIRoutes: / redirects to the UI, deep links answer the page.
func TestUIRoutes(t *testing.T) {
	c := agenttest.Start(t, 1)
	addr := c.Agent(0).HTTPAddr()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /: %d to %q, want 302 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	if body := get(t, addr, "/ui/topics/Orders"); !strings.Contains(body, `<script type="module" src="/ui/assets/app.js">`) {
		t.Errorf("deep link did not answer the UI page: %.200s", body)
	}
	if got := agent.Door[*httpapi.Server](c.Agent(0)).UIURL(); got != "http://"+addr+"/ui/" {
		t.Errorf("UIURL %q", got)
	}
	var e struct{ Error string }
	if status, _ := call(t, "GET", addr, "/nothing", nil, &e); status != 404 || !strings.Contains(e.Error, "no such endpoint") {
		t.Errorf("unknown path outside /ui/: %d %q", status, e.Error)
	}
}

func get(t *testing.T, addr, path string) string {
	t.Helper()
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// callWith sends a JSON request with extra headers and returns the status.
func callWith(t *testing.T, method, addr, path string, body any, hdr map[string]string) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// GET /v1/agent shows the configuration as written: a tag's & stays &.
func TestAgentConfigIsNotHTMLEscaped(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.Tags = map[string]string{"team": "a&b"} })
	raw := get(t, c.Agent(0).HTTPAddr(), "/v1/agent")
	if !strings.Contains(raw, `"team":"a&b"`) || strings.Contains(raw, `\u0026`) {
		t.Errorf("GET /v1/agent: %s", raw)
	}
}
