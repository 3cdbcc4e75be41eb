package nacos

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// The instance model's Nacos semantics: what a subscriber is served
// (disabled instances left out, weight 0 kept), which kind a service
// takes, and the name a client registered under.

func query(t *testing.T, c *rpc, ns, svc, clusters string) []nacoswire.Instance {
	t.Helper()
	var q nacoswire.ServiceInfoResponse
	c.call(nacoswire.TypeServiceQuery, nacoswire.ServiceQueryRequest{NamingRequest: nacoswire.NamingRequest{
		Namespace: ns, ServiceName: svc}, Cluster: clusters}, &q)
	mustOK(t, "query", q.Response)
	return q.ServiceInfo.Hosts
}

func httpList(t *testing.T, s *Server, svc string) []nacoswire.Instance {
	t.Helper()
	code, body := do(t, s, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {svc}})
	var info nacoswire.ServiceInfo
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil {
		t.Fatalf("list: %d %s", code, body)
	}
	return info.Hosts
}

// registerPersistent registers a persistent instance (nacostest's
// Register is for ephemeral ones).
func registerPersistent(c *rpc, svc string, in nacoswire.Instance) error {
	in.Ephemeral = false
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, svc, in), &resp)
	if !resp.Success {
		return fmt.Errorf("%d %s", resp.ErrorCode, resp.Message)
	}
	return nil
}

func ports(hs []nacoswire.Instance) []int {
	var out []int
	for _, h := range hs {
		out = append(out, h.Port)
	}
	return out
}

// Item 2: a disabled instance (enabled=false, over gRPC or 1.x) is left
// out of query, 1.x list, subscribe and push, as Nacos'
// ServiceUtil.selectInstances(enableOnly) does in each of them, and
// comes back when enabled again. It stays registered (its record is
// there, GET /instance still shows it, as Nacos' getInstance does).
func TestDisabledInstanceLeftOut(t *testing.T) {
	s, reg := startServer(t)
	sub := dial(t, s)
	var sresp nacoswire.ServiceInfoResponse
	sub.call(nacoswire.TypeSubscribeService, nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "orders"},
		Subscribe: true}, &sresp)
	prov := dial(t, s)
	on := nacoswire.Instance{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}
	off := nacoswire.Instance{IP: "10.0.0.2", Port: 2, Weight: 1, Healthy: true, Enabled: false, Ephemeral: true}
	for _, in := range []nacoswire.Instance{on, off} {
		if err := prov.Register("orders", in); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"},
		"port": {"3"}, "enabled": {"false"}}); code != 200 {
		t.Fatalf("1.x register: %d %s", code, body)
	}
	if got := reg.Routes.URLs("orders", "nacos"); len(got) != 3 {
		t.Fatalf("records %q: a disabled instance is still registered", got)
	}
	if got := ports(query(t, sub, "", "orders", "")); len(got) != 1 || got[0] != 1 {
		t.Fatalf("query lists ports %v, want [1]", got)
	}
	if got := ports(httpList(t, s, "orders")); len(got) != 1 || got[0] != 1 {
		t.Fatalf("1.x list lists ports %v, want [1]", got)
	}
	var again nacoswire.ServiceInfoResponse
	sub.call(nacoswire.TypeSubscribeService, nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "orders"},
		Subscribe: true}, &again)
	if got := ports(again.ServiceInfo.Hosts); len(got) != 1 || got[0] != 1 {
		t.Fatalf("subscribe answers ports %v, want [1]", got)
	}
	if code, body := do(t, s, "GET", "/nacos/v1/ns/instance", url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.2"}, "port": {"2"}}); code != 200 {
		t.Fatalf("GET /instance of a disabled instance: %d %s", code, body)
	}
	// Disabling the enabled one pushes an empty list; enabling it pushes it back.
	var push nacoswire.NotifySubscriberRequest
	for {
		sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
		if len(push.ServiceInfo.Hosts) == 1 {
			break
		}
	}
	if got := ports(push.ServiceInfo.Hosts); got[0] != 1 {
		t.Fatalf("pushed ports %v, want [1]", got)
	}
	on.Enabled = false
	if err := prov.Register("orders", on); err != nil {
		t.Fatal(err)
	}
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	if len(push.ServiceInfo.Hosts) != 0 {
		t.Fatalf("pushed %+v after disabling the last enabled instance", push.ServiceInfo.Hosts)
	}
	on.Enabled = true
	if err := prov.Register("orders", on); err != nil {
		t.Fatal(err)
	}
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	if got := ports(push.ServiceInfo.Hosts); len(got) != 1 || got[0] != 1 {
		t.Fatalf("pushed ports %v after enabling, want [1]", got)
	}
}

// Item 5 (gRPC): weight 0 is kept as 0 (an operator's way to take an
// instance out of traffic), in every answer and in the record every door
// shows; it was listed as 1.
func TestWeightZeroKept(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := dubboInst("10.0.0.5", 20880)
	in.Weight = 0
	if err := c.Register(dubboSvc, in); err != nil {
		t.Fatal(err)
	}
	if h := query(t, c, "", dubboSvc, ""); len(h) != 1 || h[0].Weight != 0 {
		t.Fatalf("query %+v, want one instance of weight 0", h)
	}
	if h := httpList(t, s, dubboSvc); len(h) != 1 || h[0].Weight != 0 {
		t.Fatalf("1.x list %+v, want one instance of weight 0", h)
	}
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 1 || !strings.Contains(got[0], "nacos.weight=0") {
		t.Fatalf("the record other doors show is %q, want nacos.weight=0 in it", got)
	}
	// A negative weight is refused, as Nacos' checkInstanceIsLegal... the
	// range Nacos takes is 0..10000.
	in.Weight = -1
	if err := c.Register(dubboSvc, in); err == nil || !strings.Contains(err.Error(), "weight") {
		t.Fatalf("weight -1 registered: %v", err)
	}
}

// Item 9: an instance registered under providers:demo.Api:1.0.0: whose
// metadata has no version is listed, pushed and stored under that name:
// the name it was registered under decides, whatever the metadata says.
func TestServiceNameRoundTrip(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := dubboInst("10.0.0.5", 20880)
	delete(in.Metadata, "version")
	if err := c.Register(dubboSvc, in); err != nil {
		t.Fatal(err)
	}
	other := dubboInst("10.0.0.6", 20880) // metadata says 2.0.0, the name 1.0.0
	other.Metadata["version"] = "2.0.0"
	other.Metadata["group"] = "g"
	if err := c.Register(dubboSvc, other); err != nil {
		t.Fatal(err)
	}
	cons := dubboInst("10.0.0.7", 0) // a consumer without category=consumers in its metadata
	delete(cons.Metadata, "category")
	if err := c.Register("consumers:demo.Api:1.0.0:", cons); err != nil {
		t.Fatal(err)
	}
	if h := query(t, c, "", dubboSvc, ""); len(h) != 2 || h[0].IP != "10.0.0.5" || h[1].IP != "10.0.0.6" ||
		h[0].Metadata["version"] != "1.0.0" || h[1].Metadata["group"] != "" {
		t.Fatalf("query of %s: %+v", dubboSvc, h)
	}
	if h := query(t, c, "", "providers:demo.Api:2.0.0:g", ""); len(h) != 0 {
		t.Fatalf("listed under its metadata's name: %+v", h)
	}
	if h := query(t, c, "", "consumers:demo.Api:1.0.0:", ""); len(h) != 1 {
		t.Fatalf("consumer: %+v", h)
	}
	var list nacoswire.ServiceListResponse
	c.call(nacoswire.TypeServiceList, nacoswire.ServiceListRequest{PageNo: 1, PageSize: 10}, &list)
	if got := strings.Join(list.ServiceNames, " "); got != "consumers:demo.Api:1.0.0: providers:demo.Api:1.0.0:" {
		t.Fatalf("service list %q", got)
	}
	for _, u := range reg.Routes.URLs("demo.Api", "providers") {
		if !strings.Contains(u, "version=1.0.0") || strings.Contains(u, "group=") {
			t.Fatalf("record %s is not the name's version and group", u)
		}
	}
}

// Item 6: a service's instances are all ephemeral or all persistent;
// registering the other kind is refused with Nacos' error (gRPC
// ErrorResponse 400, 1.x HTTP 400), and nothing changes.
func TestEphemeralAndPersistentDoNotMix(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	eph := nacoswire.Instance{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}
	per := nacoswire.Instance{IP: "10.0.0.2", Port: 2, Weight: 1, Healthy: true, Enabled: true}
	if err := c.Register("mixed", eph); err != nil {
		t.Fatal(err)
	}
	err := registerPersistent(c, "mixed", per)
	if err == nil || !strings.Contains(err.Error(), "Current service DEFAULT_GROUP@@mixed is ephemeral service, can't register persistent instance.") {
		t.Fatalf("persistent into an ephemeral service: %v", err)
	}
	code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"mixed"}, "ip": {"10.0.0.3"},
		"port": {"3"}, "ephemeral": {"false"}})
	if code != 400 || !strings.Contains(body, "is ephemeral service, can't register persistent instance.") {
		t.Fatalf("1.x persistent into an ephemeral service: %d %s", code, body)
	}
	if got := reg.Routes.URLs("mixed", "nacos"); len(got) != 1 {
		t.Fatalf("records %q after refused registrations", got)
	}
	if rules := reg.Routes.RulesWithPrefix(routes.URLPrefix("mixed", "nacos")); len(rules) != 0 {
		t.Fatalf("rules %+v after refused registrations", rules)
	}
	// The other way round.
	if err := registerPersistent(c, "static", per); err != nil {
		t.Fatal(err)
	}
	err = c.Register("static", eph)
	if err == nil || !strings.Contains(err.Error(), "Current service DEFAULT_GROUP@@static is persistent service, can't register ephemeral instance.") {
		t.Fatalf("ephemeral into a persistent service: %v", err)
	}
	code, body = do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"static"}, "ip": {"10.0.0.3"}, "port": {"3"}})
	if code != 400 || !strings.Contains(body, "is persistent service, can't register ephemeral instance.") {
		t.Fatalf("1.x ephemeral into a persistent service: %d %s", code, body)
	}
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeBatchInstance, nacoswire.BatchInstanceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "static"},
		Type: nacoswire.BatchRegisterInstance, Instances: []nacoswire.Instance{eph}}, &resp)
	if resp.Success || !strings.Contains(resp.Message, "is persistent service, can't batch register ephemeral instance.") {
		t.Fatalf("batch of ephemeral into a persistent service: %+v", resp.Response)
	}
	if got := reg.Routes.URLs("static", "nacos"); len(got) != 1 {
		t.Fatalf("records %q after refused registrations", got)
	}
	// Once the service has no instance left, either kind may register.
	var dresp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.DeregisterInstance, "static", per), &dresp)
	if !dresp.Success {
		t.Fatalf("deregister: %+v", dresp.Response)
	}
	if err := c.Register("static", eph); err != nil {
		t.Fatalf("ephemeral into a service left empty: %v", err)
	}
}
