package nacos

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// PUT /nacos/v1/ns/instance updates the instance (Nacos' updateInstance):
// one instance, its weight and enabled as given, metadata laid over the
// registration's, kept across the client's re-registration; a subscriber
// is pushed the change; PATCH changes what it names; an unknown service
// (PUT) or instance (PATCH) is refused with Nacos' error and changes
// nothing.
func TestHTTPUpdateInstance(t *testing.T) {
	s, reg := startServer(t)
	inst := url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}, "metadata": {`{"a":"1"}`}}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", inst); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	sub := dial(t, s)
	var sresp nacoswire.ServiceInfoResponse
	sub.call(nacoswire.TypeSubscribeService, nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "orders"},
		Subscribe: true}, &sresp)
	put := url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}, "weight": {"3"}, "metadata": {`{"b":"2"}`}}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance", put); code != 200 || body != "ok" {
		t.Fatalf("PUT: %d %s", code, body)
	}
	var push nacoswire.NotifySubscriberRequest
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	if h := push.ServiceInfo.Hosts; len(h) != 1 || h[0].Weight != 3 {
		t.Fatalf("pushed after the update: %+v", h)
	}
	one := func(what string) nacoswire.Instance {
		t.Helper()
		hosts := listOf(t, s, url.Values{"serviceName": {"orders"}}).Hosts
		if len(hosts) != 1 {
			t.Fatalf("%s: listed %+v; want the one instance", what, hosts)
		}
		return hosts[0]
	}
	if h := one("after PUT"); h.Weight != 3 || h.Metadata["a"] != "1" || h.Metadata["b"] != "2" || !h.Enabled {
		t.Fatalf("after PUT: %+v", h)
	}
	if n := len(reg.Routes.URLs("orders", "nacos")); n != 1 {
		t.Fatalf("PUT made %d records", n)
	}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", inst); code != 200 {
		t.Fatalf("re-register: %d %s", code, body)
	}
	if h := one("after re-registration"); h.Weight != 3 || h.Metadata["b"] != "2" {
		t.Fatalf("the update did not outlive a re-registration: %+v", h)
	}
	patch := url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}, "weight": {"0"}}
	if code, body := do(t, s, "PATCH", "/nacos/v1/ns/instance", patch); code != 200 || body != "ok" {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	if h := one("after PATCH"); h.Weight != 0 || h.Metadata["b"] != "2" {
		t.Fatalf("after PATCH weight=0: %+v", h)
	}
	put.Set("enabled", "false")
	do(t, s, "PUT", "/nacos/v1/ns/instance", put)
	if hosts := listOf(t, s, url.Values{"serviceName": {"orders"}}).Hosts; len(hosts) != 0 {
		t.Fatalf("disabled by PUT, still listed: %+v", hosts)
	}
	rules := len(reg.Routes.Rules())
	for _, c := range []struct {
		method string
		form   url.Values
		code   int
		want   string
	}{
		{"PUT", url.Values{"serviceName": {"nosuch"}, "ip": {"10.0.0.3"}, "port": {"1"}}, 400, "service not found"},
		{"PATCH", url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.9"}, "port": {"1"}, "weight": {"2"}}, 404, "no matched ip"},
		{"PATCH", url.Values{"serviceName": {"nosuch"}, "ip": {"10.0.0.9"}, "port": {"1"}}, 404, "no ips found"},
		{"PUT", url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}, "weight": {"10001"}}, 400, "weights range"},
		{"PATCH", url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}, "metadata": {"x"}}, 400, "metadata format"},
	} {
		if code, body := do(t, s, c.method, "/nacos/v1/ns/instance", c.form); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %v: %d %q; want %d with %q", c.method, c.form, code, body, c.code, c.want)
		}
	}
	if n := len(reg.Routes.Rules()); n != rules {
		t.Fatalf("refused updates changed the rules: %d, was %d", n, rules)
	}
	// Deregistering removes the update with the instance.
	if code, body := do(t, s, "DELETE", "/nacos/v1/ns/instance", inst); code != 200 {
		t.Fatalf("deregister: %d %s", code, body)
	}
	b, _ := json.Marshal(reg.Routes.Rules())
	if strings.Contains(string(b), instanceMetaNamespace) {
		t.Fatalf("the update outlived the deregistration: %s", b)
	}
}
