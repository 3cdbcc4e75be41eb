package nacos

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// appInst is an instance as dubbo-go 3.3's Nacos service discovery
// registers it (registry/nacos/service_discovery.go toRegisterInstance):
// the application is the service, the metadata names its revision, and
// "id" is dubbo-go's instance id, empty for its own instances.
func appInst(ip string, port int, rev string) nacoswire.Instance {
	return nacoswire.Instance{IP: ip, Port: port, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
		Metadata: map[string]string{"id": "", routes.MetadataRevisionKey: rev, "dubbo.metadata.storage-type": "local",
			"dubbo.endpoints": fmt.Sprintf(`[{"port":%d,"protocol":"dubbo"}]`, port)}}
}

func appInstances(t *testing.T, reg *hosttest.Fake, app string) []routes.Instance {
	t.Helper()
	d, _ := reg.Routes.App(app)
	return d.Instances
}

// An application instance registered through Nacos (Dubbo 3's
// application-level discovery) is the application instance every door
// shows: the /services/{app}/{ip:port} znode holding Curator's JSON, as a
// ZooKeeper registration writes it, held by this agent with the owner the
// ZooKeeper door shows for records without a session. Re-registered with
// another revision it changes in place; deregistered it goes.
func TestAppInstanceIsTheApplicationInstance(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "demo-app", appInst("10.0.0.5", 20880, "111")), &resp)
	mustOK(t, "register", resp.Response)
	ins := appInstances(t, reg, "demo-app")
	if len(ins) != 1 || ins[0].ID != "10.0.0.5:20880" || ins[0].Address != "10.0.0.5" || ins[0].Port != 20880 ||
		ins[0].Revision != "111" || ins[0].Agent != "local" || ins[0].Problem != "" || ins[0].Metadata["dubbo.endpoints"] == "" {
		t.Fatalf("application instances %+v", ins)
	}
	if _, had := ins[0].Metadata["id"]; had {
		t.Fatalf("dubbo-go's empty id kept as metadata: %+v", ins[0].Metadata)
	}
	if got := reg.Routes.URLs("demo-app", ""); len(got) != 0 {
		t.Fatalf("also recorded as URLs %q", got)
	}
	rec, ok := reg.Routes.LocalRecord(routes.ZnodeKey("/services/demo-app/10.0.0.5:20880", ""))
	if !ok || rec.Znode == nil || rec.Znode.Owner != routes.OriginOwner("local") || rec.Znode.Stamp == 0 {
		t.Fatalf("the instance's znode record: %+v", rec.Znode)
	}

	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "demo-app", appInst("10.0.0.5", 20880, "222")), &resp)
	mustOK(t, "re-register", resp.Response)
	if ins = appInstances(t, reg, "demo-app"); len(ins) != 1 || ins[0].Revision != "222" {
		t.Fatalf("after re-registering with revision 222: %+v", ins)
	}
	again, _ := reg.Routes.LocalRecord(routes.ZnodeKey("/services/demo-app/10.0.0.5:20880", ""))
	if again.Znode.Ctime != rec.Znode.Ctime || again.Znode.Version != rec.Znode.Version+1 || again.Znode.Stamp <= rec.Znode.Stamp {
		t.Fatalf("changed in place: %+v, was %+v", again.Znode, rec.Znode)
	}

	c.call(nacoswire.TypeInstance, instReq(nacoswire.DeregisterInstance, "demo-app", appInst("10.0.0.5", 20880, "222")), &resp)
	mustOK(t, "deregister", resp.Response)
	if ins = appInstances(t, reg, "demo-app"); len(ins) != 0 {
		t.Fatalf("after deregister: %+v", ins)
	}
}

// A Nacos query of the application lists its instances, however they were
// registered, with the metadata they carry: one registered through Nacos
// reads back as it was registered, one written over ZooKeeper (or HTTP)
// names its id; the application is in the service list, and a subscriber
// is pushed a new instance from another door.
func TestApplicationInstancesAreNacosInstances(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := appInst("10.0.0.5", 20880, "111")
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "demo-app", in), &resp)
	mustOK(t, "register", resp.Response)

	var sub nacoswire.ServiceInfoResponse
	c.call(nacoswire.TypeSubscribeService, nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "demo-app"},
		Subscribe: true}, &sub)
	mustOK(t, "subscribe", sub.Response)
	want := maps.Clone(in.Metadata)
	delete(want, "id")
	if h := sub.ServiceInfo.Hosts; len(h) != 1 || h[0].IP != "10.0.0.5" || h[0].Port != 20880 || !h[0].Ephemeral || !h[0].Healthy ||
		!h[0].Enabled || h[0].Weight != 1 || !maps.Equal(h[0].Metadata, want) || h[0].InstanceID != "10.0.0.5#20880#DEFAULT#DEFAULT_GROUP@@demo-app" {
		t.Fatalf("hosts %+v, want the metadata %v", h, want)
	}

	zkMeta := map[string]string{routes.MetadataRevisionKey: "111", "dubbo.metadata.storage-type": "local"}
	z := routes.Znode{Path: "/services/demo-app/zk-1", Owner: 7, Stamp: reg.Routes.Stamp(),
		Data: routes.CuratorInstanceJSON("demo-app", "zk-1", "10.0.0.6", 20881, zkMeta, 1)}
	reg.Apply([]routes.Record{{Znode: &z}}, nil)
	var push nacoswire.NotifySubscriberRequest
	c.NextPush(nacoswire.TypeNotifySubscriber, &push)
	h := push.ServiceInfo.Hosts
	if len(h) != 2 || h[1].IP != "10.0.0.6" || h[1].Metadata["id"] != "zk-1" || h[1].Metadata[routes.MetadataRevisionKey] != "111" {
		t.Fatalf("pushed hosts %+v", h)
	}
	var list nacoswire.ServiceListResponse
	c.call(nacoswire.TypeServiceList, nacoswire.ServiceListRequest{PageNo: 1, PageSize: 10}, &list)
	if fmt.Sprint(list.ServiceNames) != "[demo-app]" {
		t.Fatalf("service list %+v", list)
	}
	// Another group or namespace is not Dubbo's application root.
	var q nacoswire.ServiceInfoResponse
	c.call(nacoswire.TypeServiceQuery, nacoswire.ServiceQueryRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: "demo-app", GroupName: "other"}}, &q)
	if len(q.ServiceInfo.Hosts) != 0 {
		t.Fatalf("group other lists %+v", q.ServiceInfo.Hosts)
	}
}

func mappingReq(iface string) nacoswire.ConfigRequest {
	return nacoswire.ConfigRequest{DataID: iface, Group: "mapping"}
}

// The interface → application mapping dubbo-go and Java Dubbo publish as
// the config (dataId interface, group "mapping") is the ZooKeeper door's
// /dubbo/mapping/{interface}, this agent's part of the set; a config query
// reads the whole set, and a listener hears of another agent's part.
func TestMappingConfigIsTheServiceNameMapping(t *testing.T) {
	s, reg := startServer(t)
	c, l := dial(t, s), dial(t, s)
	var lr nacoswire.ConfigChangeBatchListenResponse
	l.call(nacoswire.TypeConfigBatchListen, nacoswire.ConfigBatchListenRequest{Listen: true,
		ConfigListenContexts: []nacoswire.ConfigListenContext{{DataID: "demo.Api", Group: "mapping", MD5: md5Hex("")}}}, &lr)
	var r nacoswire.Response
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: mappingReq("demo.Api"), Content: "demo-app"}, &r)
	mustOK(t, "publish", r)
	if got := reg.Routes.AppsOf("demo.Api"); fmt.Sprint(got) != "[demo-app]" {
		t.Fatalf("applications of demo.Api: %v", got)
	}
	parts := reg.Routes.RulesWithPrefix(routes.ZnodePartsPrefix("/dubbo/mapping/demo.Api"))
	if len(parts) != 1 || parts[0].Rec.Znode.Part != "local" || string(parts[0].Rec.Znode.Data) != "demo-app" {
		t.Fatalf("mapping parts %+v", parts)
	}
	if len(reg.Routes.RulesWithPrefix(routes.KVPrefix(configNamespace))) != 0 {
		t.Fatal("the mapping is a config record as well")
	}
	var push nacoswire.ConfigChangeNotifyRequest
	l.NextPush(nacoswire.TypeConfigChangeNotify, &push)

	far := routes.Znode{Path: "/dubbo/mapping/demo.Api", Part: "far", Data: []byte("other-app"), Stamp: reg.Routes.Stamp()}
	reg.ApplyRules([]routes.Record{{Znode: &far}}, nil)
	l.NextPush(nacoswire.TypeConfigChangeNotify, &push)
	if push.DataID != "demo.Api" || push.Group != "mapping" {
		t.Fatalf("push %+v", push)
	}
	var q nacoswire.ConfigQueryResponse
	c.call(nacoswire.TypeConfigQuery, nacoswire.ConfigQueryRequest{ConfigRequest: mappingReq("demo.Api")}, &q)
	if !q.Success || q.Content != "demo-app,other-app" || q.MD5 != md5Hex("demo-app,other-app") {
		t.Fatalf("query %+v", q)
	}
	// Java Dubbo's CAS on the MD5 of what it read.
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: mappingReq("demo.Api"),
		Content: "demo-app,other-app,third-app", CasMD5: md5Hex("demo-app,other-app")}, &r)
	mustOK(t, "CAS publish", r)
	if got := reg.Routes.AppsOf("demo.Api"); fmt.Sprint(got) != "[demo-app other-app third-app]" {
		t.Fatalf("applications of demo.Api: %v", got)
	}
}

// An application's MetadataInfo published as the config (dataId app,
// group revision; metadata-type remote) is the metadata znode Java Dubbo
// and dubbo-go read over ZooKeeper, and the application view shows the
// interfaces of an instance of that revision; one written over ZooKeeper
// reads back as the config.
func TestMetadataConfigIsTheApplicationMetadata(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	meta := `{"app":"demo-app","revision":"111","services":{"demo.Api:dubbo":{"name":"demo.Api","protocol":"dubbo","path":"demo.Api"}}}`
	var r nacoswire.Response
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: nacoswire.ConfigRequest{DataID: "demo-app", Group: "111"},
		Content: meta}, &r)
	mustOK(t, "publish", r)
	for _, p := range []string{"/dubbo/metadata/demo-app/111", "/dubbo/demo-app/111"} {
		if rec, ok := reg.Routes.Rule(routes.ZnodeKey(p, "")); !ok || string(rec.Znode.Data) != meta {
			t.Fatalf("%s: %+v %v", p, rec.Znode, ok)
		}
	}
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "demo-app", appInst("10.0.0.5", 20880, "111")), &resp)
	if ins := appInstances(t, reg, "demo-app"); len(ins) != 1 || fmt.Sprint(ins[0].Services) != "[demo.Api]" {
		t.Fatalf("instances %+v", ins)
	}
	var q nacoswire.ConfigQueryResponse
	c.call(nacoswire.TypeConfigQuery, nacoswire.ConfigQueryRequest{ConfigRequest: nacoswire.ConfigRequest{DataID: "demo-app", Group: "111"}}, &q)
	if !q.Success || q.Content != meta {
		t.Fatalf("query %+v", q)
	}

	// dubbo-go's ZooKeeper metadata report writes /dubbo/{app}/{revision}.
	zkMeta := `{"app":"zk-app","revision":"9","services":{}}`
	reg.ApplyRules([]routes.Record{{Znode: &routes.Znode{Path: "/dubbo/zk-app/9", Data: []byte(zkMeta)}}}, nil)
	c.call(nacoswire.TypeConfigQuery, nacoswire.ConfigQueryRequest{ConfigRequest: nacoswire.ConfigRequest{DataID: "zk-app", Group: "9"}}, &q)
	if !q.Success || q.Content != zkMeta {
		t.Fatalf("query of ZooKeeper's metadata %+v", q)
	}
	// Content that is not that revision's MetadataInfo is a plain config.
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: nacoswire.ConfigRequest{DataID: "demo-app", Group: "333"},
		Content: meta}, &r)
	mustOK(t, "publish", r)
	if _, ok := reg.Routes.Rule(routes.ZnodeKey("/dubbo/metadata/demo-app/333", "")); ok {
		t.Fatal("metadata of revision 111 written as revision 333")
	}
	var m map[string]any
	if json.Unmarshal([]byte(meta), &m) != nil || !strings.Contains(meta, "111") {
		t.Fatal("bad fixture")
	}
}

// An application instance is bounded, as a URL record is: one too large
// is refused with Nacos' bad-parameter error and changes nothing.
func TestAppInstanceTooLargeIsRefused(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := appInst("10.0.0.5", 20880, "111")
	in.Metadata["big"] = strings.Repeat("x", MaxAppInstance)
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "demo-app", in), &resp)
	if resp.Success || resp.ErrorCode != nacoswire.ErrInvalidParam || !strings.Contains(resp.Message, "limit") {
		t.Fatalf("an instance over the limit answered %+v", resp.Response)
	}
	if _, ok := reg.Routes.App("demo-app"); ok {
		t.Fatal("the refused instance was recorded")
	}
	in.Metadata["id"] = "a/b"
	delete(in.Metadata, "big")
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "demo-app", in), &resp)
	if resp.Success || resp.ErrorCode != nacoswire.ErrInvalidParam {
		t.Fatalf("an id with '/' answered %+v", resp.Response)
	}
}

// Over the 1.x HTTP API too, an application instance is the application's
// instance, its beats registering it again change nothing, and a
// re-registration with another revision changes it in place.
func TestAppInstanceOverHTTP(t *testing.T) {
	s, reg := startServer(t)
	form := func(rev string) url.Values {
		return url.Values{"serviceName": {"demo-app"}, "ip": {"10.0.0.3"}, "port": {"20880"},
			"metadata": {`{"dubbo.metadata.revision":"` + rev + `","dubbo.metadata.storage-type":"local"}`}}
	}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", form("1")); code != 200 || body != "ok" {
		t.Fatalf("register: %d %s", code, body)
	}
	key := routes.ZnodeKey("/services/demo-app/10.0.0.3:20880", "")
	first, ok := reg.Routes.LocalRecord(key)
	if !ok || first.Znode == nil {
		t.Fatalf("no instance znode; application instances %+v", appInstances(t, reg, "demo-app"))
	}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", form("1")); code != 200 || body != "ok" {
		t.Fatalf("register again: %d %s", code, body)
	}
	if again, _ := reg.Routes.LocalRecord(key); again.Znode.Stamp != first.Znode.Stamp || again.Znode.Version != first.Znode.Version {
		t.Fatalf("registering the same instance again changed it: %+v, was %+v", again.Znode, first.Znode)
	}
	do(t, s, "POST", "/nacos/v1/ns/instance", form("2"))
	if ins := appInstances(t, reg, "demo-app"); len(ins) != 1 || ins[0].Revision != "2" || ins[0].Registered != first.Znode.Ctime {
		t.Fatalf("after revision 2: %+v", ins)
	}
	if code, body := do(t, s, "DELETE", "/nacos/v1/ns/instance", url.Values{"serviceName": {"demo-app"}, "ip": {"10.0.0.3"}, "port": {"20880"}}); code != 200 {
		t.Fatalf("deregister: %d %s", code, body)
	}
	if ins := appInstances(t, reg, "demo-app"); len(ins) != 0 {
		t.Fatalf("after deregister: %+v", ins)
	}
}
