package nacos

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/internal/testutil"
)

// What a client of the 1.x open API does (the SDKs other than Go's and
// Java's 2.x, and operators with curl), written against the API as
// Nacos documents it (nacos.io, Open API guide): form parameters, the
// answers Nacos gives, across agents.

// call1x sends a 1.x request with its parameters as a form body (as the
// SDKs do) and returns the status and body.
func call1x(t testing.TB, door *nacos.Server, method, path string, form url.Values, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+door.Addr()+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// listening is the Listening-Configs field of one config in the public
// namespace: dataId ^2 group ^2 md5 ^1.
func listening(dataID, group, md5 string) string {
	return dataID + "\x02" + group + "\x02" + md5 + "\x01"
}

// heldListeners waits until door holds n 1.x listeners.
func heldListeners(t testing.TB, door *nacos.Server, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		if g := door.Gauges(); g.HTTPListeners != n {
			return fmt.Errorf("%d listeners held, want %d", g.HTTPListeners, n)
		}
		return nil
	})
}

// hosts1x lists a service over the 1.x API on one agent.
func hosts1x(t testing.TB, door *nacos.Server, service string) []map[string]any {
	t.Helper()
	code, body := call1x(t, door, "GET", "/nacos/v1/ns/instance/list?serviceName="+url.QueryEscape(service), nil)
	var info struct {
		Hosts []map[string]any `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil {
		t.Fatalf("list %s: %d %s", service, code, body)
	}
	return info.Hosts
}

// A 1.x listener on agent 1 is held until a config it listens to is
// published through agent 0, and is answered as soon as the config
// reaches agent 1, with the changed key in Nacos' encoding; the listener
// then reads the config and listens again with its MD5, and a change
// through agent 2 ends that poll too. The 100 ms is shown by
// BenchmarkHTTP1xListenAcrossAgents (p99 well under it); this test's
// bound keeps headroom for a loaded machine and still fails a listener
// that waits for a poll interval or its timeout.
func TestHTTP1xListenAcrossAgents(t *testing.T) {
	_, doors := cluster(t, 3)
	type answer struct {
		code int
		body string
		at   time.Time
	}
	poll := func(md5 string) chan answer {
		got := make(chan answer, 1)
		go func() {
			code, body := call1x(t, doors[1], "POST", "/nacos/v1/cs/configs/listener",
				url.Values{"Listening-Configs": {listening("app.properties", "DEFAULT_GROUP", md5)}}, "Long-Pulling-Timeout", "30000")
			got <- answer{code, body, time.Now()}
		}()
		return got
	}
	readable := func(want string) time.Time { // when agent 1 serves the content
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			if code, body := call1x(t, doors[1], "GET", "/nacos/v1/cs/configs?dataId=app.properties&group=DEFAULT_GROUP", nil); code == 200 && body == want {
				return time.Now()
			}
			time.Sleep(2 * time.Millisecond) // a poll: the measurement's resolution
		}
		t.Fatalf("agent 1 did not serve %q within 30 s of its publication", want)
		return time.Time{}
	}
	for i, step := range []struct {
		publisher *nacos.Server
		old, new  string
	}{{doors[0], "", "a=1"}, {doors[2], "a=1", "a=2"}} {
		md5 := ""
		if step.old != "" {
			md5 = md5Hex(step.old)
		}
		got := poll(md5)
		heldListeners(t, doors[1], 1)
		if code, body := call1x(t, step.publisher, "POST", "/nacos/v1/cs/configs",
			url.Values{"dataId": {"app.properties"}, "group": {"DEFAULT_GROUP"}, "content": {step.new}}); code != 200 || body != "true" {
			t.Fatalf("step %d: publish: %d %s", i, code, body)
		}
		arrived := readable(step.new)
		var a answer
		select {
		case a = <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("step %d: the listener was not answered 10 s after the config reached its agent", i)
		}
		if a.code != 200 || a.body != "app.properties%02DEFAULT_GROUP%01\n" {
			t.Fatalf("step %d: listener answered %d %q", i, a.code, a.body)
		}
		if d := a.at.Sub(arrived); d > time.Second {
			t.Errorf("step %d: listener answered %v after the config reached its agent, want at once", i, d)
		}
	}
}

// A beat re-registers: an instance registered through agent 0, which
// restarts without a data dir, comes back with the client's next beat
// (10200, not 20404), with what the beat carries, and every agent lists
// it; a beat sent to another agent of the client's server list
// registers it there too.
func TestHTTP1xBeatsAfterRestart(t *testing.T) {
	c, doors := cluster(t, 2)
	const svc = "DEFAULT_GROUP@@beats"
	reg := url.Values{"serviceName": {svc}, "ip": {"10.0.0.41"}, "port": {"8080"}, "metadata": {`{"zone":"a"}`}}
	if code, body := call1x(t, doors[0], "POST", "/nacos/v1/ns/instance", reg); code != 200 || body != "ok" {
		t.Fatalf("register: %d %s", code, body)
	}
	beat := url.Values{"serviceName": {svc},
		"beat": {`{"cluster":"DEFAULT","ip":"10.0.0.41","metadata":{"zone":"a"},"period":5000,"port":8080,"scheduled":false,"serviceName":"` + svc + `","stopped":false,"weight":1.0}`}}
	listedOn := func(door *nacos.Server) func() error {
		return func() error {
			h := hosts1x(t, door, svc)
			if len(h) != 1 || h[0]["ip"] != "10.0.0.41" || h[0]["metadata"].(map[string]any)["zone"] != "a" {
				return fmt.Errorf("listed %v", h)
			}
			return nil
		}
	}
	testutil.Eventually(t, 10*time.Second, listedOn(doors[1]))
	a := c.Restart(0) // no data dir: the agent forgets the instance
	door0 := agent.Door[*nacos.Server](a)
	testutil.Eventually(t, 10*time.Second, func() error {
		if h := hosts1x(t, doors[1], svc); len(h) != 0 {
			return fmt.Errorf("agent 1 still lists %v from before the restart", h)
		}
		return nil
	})
	if code, body := call1x(t, door0, "PUT", "/nacos/v1/ns/instance/beat", beat); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("beat after the restart: %d %s; want code 10200", code, body)
	}
	testutil.Eventually(t, 10*time.Second, listedOn(door0))
	testutil.Eventually(t, 10*time.Second, listedOn(doors[1]))
	// The client's server list sends the next beat to agent 1.
	if code, body := call1x(t, doors[1], "PUT", "/nacos/v1/ns/instance/beat", beat); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("beat to another agent: %d %s; want code 10200", code, body)
	}
	if g := doors[1].Gauges(); g.HTTPInstances != 1 {
		t.Fatalf("agent 1 holds %d HTTP instances after the beat, want 1", g.HTTPInstances)
	}
	if err := listedOn(doors[1])(); err != nil {
		t.Fatalf("one instance held by two agents: %v", err)
	}
}

// An operator's update through one agent reaches every agent: weight 0
// and then disabling (PUT, as Nacos' console and open API do) take the
// instance out of traffic everywhere, the update outlives the client's
// re-registration, and PATCH enabled=true brings it back.
func TestHTTP1xUpdateAndDisableAcrossAgents(t *testing.T) {
	_, doors := cluster(t, 3)
	const svc = "updates"
	reg := url.Values{"serviceName": {svc}, "ip": {"10.0.0.51"}, "port": {"8080"}, "metadata": {`{"zone":"a"}`}}
	if code, body := call1x(t, doors[0], "POST", "/nacos/v1/ns/instance", reg); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	want := func(door *nacos.Server, n int, weight float64) func() error {
		return func() error {
			h := hosts1x(t, door, svc)
			if len(h) != n || n == 1 && (h[0]["weight"] != weight || h[0]["metadata"].(map[string]any)["zone"] != "a") {
				return fmt.Errorf("listed %v, want %d instance(s) of weight %v", h, n, weight)
			}
			return nil
		}
	}
	testutil.Eventually(t, 10*time.Second, want(doors[2], 1, 1))
	upd := url.Values{"serviceName": {svc}, "ip": {"10.0.0.51"}, "port": {"8080"}, "weight": {"0"}}
	if code, body := call1x(t, doors[1], "PUT", "/nacos/v1/ns/instance", upd); code != 200 || body != "ok" {
		t.Fatalf("PUT weight=0: %d %s", code, body)
	}
	for _, d := range doors {
		testutil.Eventually(t, 10*time.Second, want(d, 1, 0))
	}
	upd.Set("enabled", "false")
	if code, body := call1x(t, doors[1], "PUT", "/nacos/v1/ns/instance", upd); code != 200 {
		t.Fatalf("PUT enabled=false: %d %s", code, body)
	}
	for _, d := range doors {
		testutil.Eventually(t, 10*time.Second, want(d, 0, 0))
	}
	if code, body := call1x(t, doors[0], "POST", "/nacos/v1/ns/instance", reg); code != 200 {
		t.Fatalf("re-register: %d %s", code, body)
	}
	if err := want(doors[2], 0, 0)(); err != nil {
		t.Fatalf("the client's re-registration undid the operator's disabling: %v", err)
	}
	patch := url.Values{"serviceName": {svc}, "ip": {"10.0.0.51"}, "port": {"8080"}, "enabled": {"true"}}
	if code, body := call1x(t, doors[2], "PATCH", "/nacos/v1/ns/instance", patch); code != 200 || body != "ok" {
		t.Fatalf("PATCH enabled=true: %d %s", code, body)
	}
	for _, d := range doors {
		testutil.Eventually(t, 10*time.Second, want(d, 1, 0))
	}
	if code, body := call1x(t, doors[1], "PUT", "/nacos/v1/ns/instance", url.Values{"serviceName": {"nosuch"}, "ip": {"10.0.0.51"}, "port": {"1"}}); code != 400 ||
		!strings.Contains(body, "service not found") {
		t.Fatalf("PUT of an unknown service: %d %s; want 400 service not found", code, body)
	}
}
