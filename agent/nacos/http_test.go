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

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/internal/testutil"
)

func do(t *testing.T, s *Server, method, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+s.Addr()+path+"?"+form.Encode(), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The 1.x open API: register, list, beat, deregister; an instance whose
// beats stop is withdrawn after BeatTimeout; a beat for an unknown
// instance answers 20404.
func TestHTTPInstancesAndBeats(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.BeatTimeout = 1500 * time.Millisecond })
	inst := url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}, "metadata": {`{"zone":"a"}`}}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", inst); code != 200 || body != "ok" {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body := do(t, s, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"orders"}})
	var info nacoswire.ServiceInfo
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil || len(info.Hosts) != 1 ||
		info.Hosts[0].Metadata["zone"] != "a" || info.Name != "DEFAULT_GROUP@@orders" {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body := do(t, s, "GET", "/nacos/v1/ns/service/list", url.Values{"pageNo": {"1"}, "pageSize": {"10"}}); code != 200 ||
		!strings.Contains(body, `"doms":["orders"]`) {
		t.Fatalf("service list: %d %s", code, body)
	}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", url.Values{"serviceName": {"orders"},
		"beat": {`{"ip":"10.0.0.3","port":8080}`}}); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("beat: %d %s", code, body)
	}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", url.Values{"serviceName": {"orders"},
		"ip": {"10.9.9.9"}, "port": {"1"}}); code != 200 || !strings.Contains(body, `"code":20404`) {
		t.Fatalf("beat for an unknown instance: %d %s", code, body)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := reg.Routes.URLs("orders", "nacos"); len(got) != 0 {
			return fmt.Errorf("still registered without beats: %q", got)
		}
		return nil
	})
	do(t, s, "POST", "/nacos/v1/ns/instance", inst)
	if code, body := do(t, s, "DELETE", "/nacos/v1/ns/instance", inst); code != 200 || body != "ok" {
		t.Fatalf("deregister: %d %s", code, body)
	}
	if got := reg.Routes.URLs("orders", "nacos"); len(got) != 0 {
		t.Fatalf("after deregister: %q", got)
	}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"x"}}); code != 400 ||
		!strings.Contains(body, "port") {
		t.Fatalf("bad port: %d %s", code, body)
	}
}

// Configs over HTTP: publish, get, CAS, delete; and a gRPC listener hears
// an HTTP publish.
func TestHTTPConfigs(t *testing.T) {
	s, _ := startServer(t)
	cfg := url.Values{"dataId": {"app.yaml"}, "group": {"g"}}
	if code, _ := do(t, s, "GET", "/nacos/v1/cs/configs", cfg); code != 404 {
		t.Fatalf("absent config: %d", code)
	}
	l := dial(t, s)
	var lr nacoswire.ConfigChangeBatchListenResponse
	l.call(nacoswire.TypeConfigBatchListen, nacoswire.ConfigBatchListenRequest{Listen: true,
		ConfigListenContexts: []nacoswire.ConfigListenContext{{DataID: "app.yaml", Group: "g"}}}, &lr)
	pub := url.Values{"dataId": {"app.yaml"}, "group": {"g"}, "content": {"x: 1"}}
	if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", pub); code != 200 || body != "true" {
		t.Fatalf("publish: %d %s", code, body)
	}
	var push nacoswire.ConfigChangeNotifyRequest
	l.NextPush(nacoswire.TypeConfigChangeNotify, &push)
	if code, body := do(t, s, "GET", "/nacos/v1/cs/configs", cfg); code != 200 || body != "x: 1" {
		t.Fatalf("get: %d %s", code, body)
	}
	pub.Set("casMd5", md5Hex("x: 0"))
	if code, _ := do(t, s, "POST", "/nacos/v1/cs/configs", pub); code != 500 {
		t.Fatalf("stale CAS: %d", code)
	}
	if code, body := do(t, s, "DELETE", "/nacos/v1/cs/configs", cfg); code != 200 || body != "true" {
		t.Fatalf("delete: %d %s", code, body)
	}
	if code, _ := do(t, s, "GET", "/nacos/v1/cs/configs", cfg); code != 404 {
		t.Fatalf("deleted config: %d", code)
	}
}

// A registration with a bad service name is the client's error: 400, as
// Nacos answers a missing serviceName, and nothing registered. It was
// 503, which tells a client to retry the same request later.
func TestHTTPBadServiceNameIs400(t *testing.T) {
	s, reg := startServer(t)
	for _, name := range []string{"", "a/b", "a@@b@@c", strings.Repeat("x", MaxServiceName+1)} {
		code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {name}, "ip": {"10.0.0.3"}, "port": {"8080"}})
		if code != 400 || !strings.Contains(body, "serviceName") {
			t.Errorf("serviceName %.20q: %d %s; want 400 naming serviceName", name, code, body)
		}
	}
	if n, m := reg.Routes.Len(); m != 0 {
		t.Fatalf("bad input changed the table: %d origins, %d records", n, m)
	}
}
