package nacos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

const dubboSvc = "providers:demo.Api:1.0.0:"

func dubboInst(ip string, port int) nacoswire.Instance {
	return nacoswire.Instance{IP: ip, Port: port, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
		Metadata: map[string]string{"protocol": "dubbo", "path": "demo.Api", "interface": "demo.Api",
			"version": "1.0.0", "side": "provider", "category": "providers"}}
}

func instReq(typ, svc string, in nacoswire.Instance) nacoswire.InstanceRequest {
	return nacoswire.InstanceRequest{NamingRequest: nacoswire.NamingRequest{Request: nacoswire.Request{RequestID: "9"},
		ServiceName: svc, GroupName: "DEFAULT_GROUP"}, Type: typ, Instance: in}
}

func mustOK(t *testing.T, typ string, r nacoswire.Response) {
	t.Helper()
	if !r.Success {
		t.Fatalf("%s answered %+v", typ, r)
	}
}

// A Dubbo provider registered through Nacos is the Dubbo URL record every
// other door shows.
func TestDubboProviderIsAURLRecord(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	var resp nacoswire.InstanceResponse
	if typ := c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, dubboSvc, dubboInst("10.0.0.5", 20880)), &resp); typ != "InstanceResponse" {
		t.Fatalf("answer type %s: %+v", typ, resp)
	}
	mustOK(t, "register", resp.Response)
	want := "dubbo://10.0.0.5:20880/demo.Api?category=providers&interface=demo.Api&side=provider&version=1.0.0"
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 1 || got[0] != want {
		t.Fatalf("URL records %q, want [%s]", got, want)
	}
	c.call(nacoswire.TypeInstance, instReq(nacoswire.DeregisterInstance, dubboSvc, dubboInst("10.0.0.5", 20880)), &resp)
	mustOK(t, "deregister", resp.Response)
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 0 {
		t.Fatalf("after deregister: %q", got)
	}
}

// A provider registered through another door (ZooKeeper, HTTP) is an
// instance to a Nacos query, and one of another version is not.
func TestURLFromAnotherDoorIsAnInstance(t *testing.T) {
	s, reg := startServer(t)
	for _, u := range []string{
		"dubbo://10.0.0.6:20880/demo.Api?interface=demo.Api&version=1.0.0&weight=3",
		"dubbo://10.0.0.7:20880/demo.Api?interface=demo.Api&version=2.0.0",
	} {
		reg.Apply([]routes.Record{{URL: &routes.URL{Interface: "demo.Api", Category: "providers", URL: u}}}, nil)
	}
	c := dial(t, s)
	var resp nacoswire.ServiceInfoResponse
	c.call(nacoswire.TypeServiceQuery, nacoswire.ServiceQueryRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: dubboSvc}}, &resp)
	mustOK(t, "query", resp.Response)
	h := resp.ServiceInfo.Hosts
	if len(h) != 1 || h[0].IP != "10.0.0.6" || h[0].Port != 20880 || h[0].Metadata["protocol"] != "dubbo" ||
		h[0].Metadata["path"] != "demo.Api" || !h[0].Ephemeral || h[0].ClusterName != "DEFAULT" {
		t.Fatalf("hosts %+v", h)
	}
	if resp.ServiceInfo.Name != dubboSvc || resp.ServiceInfo.GroupName != "DEFAULT_GROUP" {
		t.Fatalf("service info %+v", resp.ServiceInfo)
	}
	var list nacoswire.ServiceListResponse
	c.call(nacoswire.TypeServiceList, nacoswire.ServiceListRequest{PageNo: 1, PageSize: 10}, &list)
	if fmt.Sprint(list.ServiceNames) != "[providers:demo.Api:1.0.0: providers:demo.Api:2.0.0:]" || list.Count != 2 {
		t.Fatalf("service list %+v", list)
	}
}

// A Spring Cloud style service is a nacos:// URL with its namespace, group
// and cluster kept, invisible from other namespaces.
func TestPlainServiceKeepsNamespaceGroupCluster(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := nacoswire.Instance{IP: "10.0.0.8", Port: 8080, Weight: 2, Healthy: true, Enabled: true, Ephemeral: true,
		ClusterName: "east", Metadata: map[string]string{"zone": "a"}}
	req := nacoswire.InstanceRequest{NamingRequest: nacoswire.NamingRequest{Namespace: "dev", ServiceName: "orders", GroupName: "shop"},
		Type: nacoswire.RegisterInstance, Instance: in}
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, req, &resp)
	mustOK(t, "register", resp.Response)
	want := "nacos://10.0.0.8:8080/orders?nacos.cluster=east&nacos.group=shop&nacos.namespace=dev&nacos.weight=2&zone=a"
	if got := reg.Routes.URLs("orders", "nacos"); len(got) != 1 || got[0] != want {
		t.Fatalf("records %q, want %s", got, want)
	}
	var q nacoswire.ServiceInfoResponse
	c.call(nacoswire.TypeServiceQuery, nacoswire.ServiceQueryRequest{NamingRequest: nacoswire.NamingRequest{
		Namespace: "dev", ServiceName: "orders", GroupName: "shop"}, Cluster: "east"}, &q)
	if h := q.ServiceInfo.Hosts; len(h) != 1 || h[0].Weight != 2 || h[0].ClusterName != "east" || h[0].Metadata["zone"] != "a" ||
		h[0].InstanceID != "10.0.0.8#8080#east#shop@@orders" {
		t.Fatalf("hosts %+v", h)
	}
	c.call(nacoswire.TypeServiceQuery, nacoswire.ServiceQueryRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "orders"}}, &q)
	if len(q.ServiceInfo.Hosts) != 0 {
		t.Fatalf("public namespace sees %+v", q.ServiceInfo.Hosts)
	}
	var list nacoswire.ServiceListResponse
	c.call(nacoswire.TypeServiceList, nacoswire.ServiceListRequest{NamingRequest: nacoswire.NamingRequest{Namespace: "dev", GroupName: "shop"},
		PageNo: 1, PageSize: 10}, &list)
	if fmt.Sprint(list.ServiceNames) != "[orders]" {
		t.Fatalf("list %+v", list)
	}
}

// A subscriber is pushed the new instance list when a provider registers
// on another connection, and when its connection dies the provider's
// instances go after the grace.
func TestSubscriberNotifiedAndDeadClientWithdrawn(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.Grace = 200 * time.Millisecond })
	sub := dial(t, s)
	var sresp nacoswire.ServiceInfoResponse
	sub.call(nacoswire.TypeSubscribeService, nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: dubboSvc},
		Subscribe: true}, &sresp)
	mustOK(t, "subscribe", sresp.Response)
	prov := dial(t, s)
	var resp nacoswire.InstanceResponse
	prov.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, dubboSvc, dubboInst("10.0.0.5", 20880)), &resp)
	mustOK(t, "register", resp.Response)
	var push nacoswire.NotifySubscriberRequest
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	if len(push.ServiceInfo.Hosts) != 1 || push.ServiceInfo.LastRefTime <= sresp.ServiceInfo.LastRefTime {
		t.Fatalf("push %+v after %+v", push.ServiceInfo, sresp.ServiceInfo)
	}
	prov.Kill()
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	if len(push.ServiceInfo.Hosts) != 0 {
		t.Fatalf("push after the provider died: %+v", push.ServiceInfo.Hosts)
	}
	if got := reg.Routes.URLs("demo.Api", ""); len(got) != 0 {
		t.Fatalf("records left: %q", got)
	}
}

// Two connections holding the same instance: it stays until the last lets go.
func TestInstanceStaysWhileAnyConnectionHoldsIt(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.Grace = 50 * time.Millisecond })
	a, b := dial(t, s), dial(t, s)
	var resp nacoswire.InstanceResponse
	for _, c := range []*rpc{a, b} {
		c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, dubboSvc, dubboInst("10.0.0.5", 20880)), &resp)
		mustOK(t, "register", resp.Response)
	}
	a.Kill()
	testutil.Eventually(t, 5*time.Second, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.clients) != 1 {
			return fmt.Errorf("%d clients", len(s.clients))
		}
		return nil
	})
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 1 {
		t.Fatalf("records %q while b holds it", got)
	}
	b.call(nacoswire.TypeInstance, instReq(nacoswire.DeregisterInstance, dubboSvc, dubboInst("10.0.0.5", 20880)), &resp)
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 0 {
		t.Fatalf("records %q after the last holder left", got)
	}
}

// Persistent instances are cluster rules and survive their connection.
func TestPersistentInstanceIsARule(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := nacoswire.Instance{IP: "10.0.0.9", Port: 80, Weight: 1, Healthy: true, Enabled: true}
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "static", in), &resp)
	mustOK(t, "register", resp.Response)
	rules := reg.Routes.RulesWithPrefix(routes.URLPrefix("static", "nacos"))
	if len(rules) != 1 || !strings.Contains(rules[0].Rec.URL.URL, "nacos.persistent=true") {
		t.Fatalf("rules %+v", rules)
	}
	c.Close()
	in.Weight = 5 // a re-registration replaces it
	d := dial(t, s)
	d.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "static", in), &resp)
	if rules := reg.Routes.RulesWithPrefix(routes.URLPrefix("static", "nacos")); len(rules) != 1 || !strings.Contains(rules[0].Rec.URL.URL, "nacos.weight=5") {
		t.Fatalf("rules after re-register %+v", rules)
	}
	d.call(nacoswire.TypeInstance, instReq(nacoswire.DeregisterInstance, "static", in), &resp)
	if rules := reg.Routes.RulesWithPrefix(routes.URLPrefix("static", "nacos")); len(rules) != 0 {
		t.Fatalf("rules after deregister %+v", rules)
	}
}

// A bi-stream outlives its pushes' write deadlines: a push, a quiet spell
// longer than WriteTimeout, and the next push still arrives on the same
// stream (net/http resets an HTTP/2 stream whose write deadline passes,
// written or not, so each push must clear its deadline once written).
func TestStreamOutlivesPushDeadline(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.WriteTimeout = 100 * time.Millisecond })
	sub := dial(t, s)
	var sresp nacoswire.ServiceInfoResponse
	sub.call(nacoswire.TypeSubscribeService, nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "svc"},
		Subscribe: true}, &sresp)
	put := func(port int) {
		u := fmt.Sprintf("nacos://10.0.0.1:%d/svc", port)
		reg.Apply([]routes.Record{{URL: &routes.URL{Interface: "svc", Category: "nacos", URL: u}}}, nil)
	}
	var push nacoswire.NotifySubscriberRequest
	put(1)
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	quiet := time.NewTimer(3 * s.cfg.WriteTimeout) // longer than the deadline, by a clock, not a poll
	<-quiet.C
	put(2)
	sub.NextPush(nacoswire.TypeNotifySubscriber, &push)
	if len(push.ServiceInfo.Hosts) != 2 {
		t.Fatalf("second push %+v", push.ServiceInfo.Hosts)
	}
}
