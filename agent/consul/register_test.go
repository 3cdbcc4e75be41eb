package consul

import (
	"net/http"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/routes"
)

// A service registered through the door is a record of this agent every
// door reads (an application instance), with its tags, meta and check
// states; deregistering withdraws it.
func TestRegisterIsARecordEveryDoorReads(t *testing.T) {
	d := newDoor(t)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"ID": "web-1", "Name": "web", "Tags": []string{"v1"}, "Port": 8080,
		"Address": "10.0.0.9", "Meta": map[string]string{"team": "blue"}, "Check": map[string]any{"TTL": "10s"}}, nil)
	app, ok := d.host.Routes.App("web")
	if !ok || len(app.Instances) != 1 || app.Instances[0].Address != "10.0.0.9" || app.Instances[0].Port != 8080 || app.Instances[0].Agent != "agent-a" {
		t.Fatalf("application view: %+v %v", app, ok)
	}
	var entries []serviceEntry
	d.ok("GET", "/v1/health/service/web", nil, &entries)
	if len(entries) != 1 || entries[0].Service.ID != "web-1" || entries[0].Node.Node != "agent-a" || entries[0].Node.Address != "10.1.0.1" ||
		len(entries[0].Checks) != 2 || entries[0].Checks[1].CheckID != "service:web-1" || entries[0].Checks[1].Status != "critical" {
		t.Fatalf("health: %+v", entries)
	}
	d.ok("GET", "/v1/health/service/web?passing", nil, &entries)
	if len(entries) != 0 {
		t.Fatalf("?passing lists a critical instance: %+v", entries)
	}
	d.ok("PUT", "/v1/agent/check/pass/service:web-1?note=fine", nil, nil)
	d.ok("GET", "/v1/health/service/web?passing=true", nil, &entries)
	if len(entries) != 1 || entries[0].Checks[1].Output != "fine" {
		t.Fatalf("after pass: %+v", entries)
	}
	in := catalog.Lookup(d.host.Routes, "web")
	if len(in) != 1 || in[0].Status() != catalog.Passing {
		t.Fatalf("the record does not carry the passing status: %+v", in)
	}
	d.ok("PUT", "/v1/agent/service/deregister/web-1", nil, nil)
	if _, ok := d.host.Routes.App("web"); ok {
		t.Fatal("deregistered service still in the table")
	}
	if code, _, body := d.call("PUT", "/v1/agent/service/deregister/web-1", nil); code != 404 || !strings.Contains(string(body), "Unknown service ID") {
		t.Fatalf("deregister again: %d %s", code, body)
	}
}

// An output-only update is not written to the record (the holder keeps
// it); a status change is.
func TestOutputAloneIsNotSpread(t *testing.T) {
	d := newDoor(t)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "api", "Port": 1, "Check": map[string]any{"TTL": "30s", "Status": "passing"}}, nil)
	before := d.host.Routes.Index()
	d.ok("PUT", "/v1/agent/check/pass/service:api?note=one", nil, nil)
	d.ok("PUT", "/v1/agent/check/pass/service:api?note=two", nil, nil)
	if after := d.host.Routes.Index(); after != before {
		t.Errorf("output-only updates changed the table (index %d -> %d)", before, after)
	}
	var checks map[string]healthCheck
	d.ok("GET", "/v1/agent/checks", nil, &checks)
	if checks["service:api"].Output != "two" {
		t.Errorf("agent/checks output %q, want the latest (two)", checks["service:api"].Output)
	}
	d.ok("PUT", "/v1/agent/check/warn/service:api?note=slow", nil, nil)
	if in := catalog.Lookup(d.host.Routes, "api"); len(in) != 1 || in[0].Status() != catalog.Warning || in[0].Checks[0].Output != "slow" {
		t.Errorf("status change not in the record: %+v", in)
	}
}

// Bad input gets Consul's status codes and changes nothing.
func TestBadInputGetsConsulsCodes(t *testing.T) {
	d := newDoor(t)
	for _, tc := range []struct {
		method, path string
		body         any
		code         int
		want         string
	}{
		{"PUT", "/v1/agent/service/register", `{"Name":`, 400, "Request decode failed"},
		{"PUT", "/v1/agent/service/register", map[string]any{"Port": 1}, 400, "Missing service name"},
		{"PUT", "/v1/agent/service/register", map[string]any{"Name": "x", "Meta": map[string]string{"a.b": "c"}}, 400, "Key contains invalid characters"},
		{"PUT", "/v1/agent/service/register", map[string]any{"Name": "x", "Check": map[string]any{"HTTP": "http://x"}}, 400, invalidCheckMessage},
		{"PUT", "/v1/agent/service/register", map[string]any{"Name": "x", "Check": map[string]any{"Args": []string{"/bin/true"}, "Interval": "10s"}}, 400, "Script checks are not run"},
		{"PUT", "/v1/agent/service/register", map[string]any{"Name": "x", "Check": map[string]any{"TTL": "1s", "Status": "bogus"}}, 400, "Status for checks must"},
		{"PUT", "/v1/agent/service/register", map[string]any{"Name": "x", "Connect": map[string]any{"Native": true}}, 400, "Connect"},
		{"PUT", "/v1/agent/service/register", map[string]any{"Name": "x", "Address": "0.0.0.0"}, 400, "Invalid service address"},
		{"PUT", "/v1/agent/service/register", strings.Repeat(" ", maxBody+1), 413, "too large"},
		{"GET", "/v1/agent/service/register", nil, 405, "method GET not allowed"},
		{"PUT", "/v1/agent/check/pass/nope", nil, 404, `Unknown check ID "nope"`},
		{"PUT", "/v1/agent/check/register", map[string]any{"TTL": "1s"}, 400, "Missing check name"},
		{"PUT", "/v1/agent/check/register", map[string]any{"Name": "c", "TTL": "1s", "ServiceID": "none"}, 400, `ServiceID "none" does not exist`},
		{"PUT", "/v1/agent/check/update/x", map[string]any{"Status": "meh"}, 400, "Invalid check status"},
		{"GET", "/v1/health/service/x?index=abc", nil, 400, "Invalid index"},
		{"GET", "/v1/health/service/x?index=1&wait=forever", nil, 400, "Invalid wait time"},
		{"GET", "/v1/health/service/x?dc=dc2", nil, 500, "No path to datacenter"},
		{"GET", "/v1/health/service/x?filter=Service.Tags%20%3D%3D", nil, 400, "Failed to create boolean expression evaluator"},
		{"GET", "/v1/catalog/services?filter=bad((", nil, 400, "Failed to create boolean expression evaluator"},
		{"GET", "/v1/agent/checks?filter=bad((", nil, 400, "Failed to create boolean expression evaluator"},
		{"GET", "/v1/health/state/bogus", nil, 400, "Invalid check state"},
		{"GET", "/v1/kv/a?consistent", nil, 400, "consistent"},
		{"PUT", "/v1/kv/a?acquire=abc", "v", 400, "sessions"},
		{"PUT", "/v1/kv/a?cas=x", "v", 400, "Invalid cas"},
		{"PUT", "/v1/kv/a?flags=-1", "v", 400, "Invalid flags"},
		{"PUT", "/v1/kv/big", strings.Repeat("v", maxKVValue+1), 413, "kv_max_value_size"},
		{"PUT", "/v1/kv/", "v", 400, "Missing key name"},
		{"GET", "/v1/acl/tokens", nil, 401, "ACL support disabled"},
		{"GET", "/v1/query", nil, 400, "prepared queries"},
		{"PUT", "/v1/session/create", nil, 400, "sessions"},
		{"GET", "/v1/nothing", nil, 404, "404 page not found"},
	} {
		before := d.host.Routes.Index()
		code, _, body := d.call(tc.method, tc.path, tc.body)
		if code != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s %s: %d %q, want %d with %q", tc.method, tc.path, code, body, tc.code, tc.want)
		}
		if after := d.host.Routes.Index(); after != before {
			t.Errorf("%s %s changed the table", tc.method, tc.path)
		}
	}
}

// A registration past the agent's record budget is refused naming it.
func TestRegistrationPastTheBudget(t *testing.T) {
	d := newDoor(t)
	d.host.Budget = routes.Budget{Records: 1}
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "one"}, nil)
	code, _, body := d.call("PUT", "/v1/agent/service/register", map[string]any{"Name": "two"})
	if code != http.StatusInternalServerError || !strings.Contains(string(body), "--max-records") {
		t.Fatalf("past the budget: %d %s", code, body)
	}
	if _, ok := d.host.Routes.App("two"); ok {
		t.Fatal("the refused registration is in the table")
	}
}

// ?node-meta keeps the instances whose node has the metadata (every node
// has consul-network-segment "", as a Consul agent's); a bad one is 400.
func TestNodeMetaFilter(t *testing.T) {
	d := newDoor(t)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "web"}, nil)
	var es []serviceEntry
	d.ok("GET", "/v1/health/service/web?node-meta=consul-network-segment:", nil, &es)
	if len(es) != 1 {
		t.Errorf("node-meta the node has: %d entries", len(es))
	}
	d.ok("GET", "/v1/health/service/web?node-meta=rack:r1", nil, &es)
	if len(es) != 0 {
		t.Errorf("node-meta no node has: %d entries", len(es))
	}
	if code, _, _ := d.call("GET", "/v1/catalog/service/web?node-meta=rack", nil); code != 400 {
		t.Errorf("node-meta without ':': %d", code)
	}
}

// A provider registered through Dubbo's Consul registry (tag dubbo, its
// URL in Meta.url, named by its interface) is also the Dubbo URL record
// every other door serves, while its checks pass; the catalog lists it
// once.
func TestDubboConsulProviderIsADubboURL(t *testing.T) {
	d := newDoor(t)
	url := "dubbo://10.0.0.7:20880/org.demo.Greeter?side=provider&version=1.0"
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"ID": "p1", "Name": "org.demo.Greeter", "Address": "10.0.0.7", "Port": 20880,
		"Tags": []string{"dubbo"}, "Meta": map[string]string{"url": url}, "Check": map[string]any{"CheckID": "p1-ttl", "TTL": "1m", "Status": "passing"}}, nil)
	urls := func() []string { return d.host.Routes.URLs("org.demo.Greeter", "providers") }
	if got := urls(); len(got) != 1 {
		t.Fatalf("provider URLs after the registration: %v", got)
	}
	if in := catalog.Lookup(d.host.Routes, "org.demo.Greeter"); len(in) != 1 || in[0].Source != catalog.FromConsul {
		t.Fatalf("catalog lists %+v, want the Consul registration once", in)
	}
	d.ok("PUT", "/v1/agent/check/fail/p1-ttl", nil, nil)
	if got := urls(); len(got) != 0 {
		t.Fatalf("a critical provider is still a Dubbo URL: %v", got)
	}
	if in := catalog.Lookup(d.host.Routes, "org.demo.Greeter"); len(in) != 1 || in[0].Status() != catalog.Critical {
		t.Fatalf("catalog after the failure: %+v", in)
	}
	d.ok("PUT", "/v1/agent/check/pass/p1-ttl", nil, nil)
	if got := urls(); len(got) != 1 {
		t.Fatalf("provider URLs after passing again: %v", got)
	}
	d.ok("PUT", "/v1/agent/service/deregister/p1", nil, nil)
	if got := urls(); len(got) != 0 {
		t.Fatalf("provider URLs after the deregistration: %v", got)
	}
	if _, ok := d.host.Lease(leaseDoor, "p1"); ok {
		t.Error("lease left")
	}
}

// The service list, shared between queries at one index, follows every
// change.
func TestServiceListFollowsChanges(t *testing.T) {
	d := newDoor(t)
	var names map[string][]string
	for _, n := range []string{"a", "b", "c"} {
		d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": n, "Tags": []string{"t-" + n}}, nil)
		d.ok("GET", "/v1/catalog/services", nil, &names)
		if len(names[n]) != 1 || names[n][0] != "t-"+n {
			t.Fatalf("after registering %s: %v", n, names)
		}
	}
	d.ok("PUT", "/v1/agent/service/deregister/b", nil, nil)
	names = nil // json.Unmarshal would add to the map it has
	d.ok("GET", "/v1/catalog/services", nil, &names)
	if _, ok := names["b"]; ok || len(names) != 2 {
		t.Fatalf("after deregistering b: %v", names)
	}
}
