package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/namecast/namecast/routes"
)

// Every kind of record is an instance of the service its document names
// (docs/protocols/consul.md, "The service model"), with the node that
// holds it.
func TestEveryRecordIsAnInstance(t *testing.T) {
	tab := routes.NewTable("agent-a", 1)
	url := "dubbo://10.0.0.1:20880/org.demo.Greeter?application=shop&side=provider&version=1.0"
	reg := Registration{ID: "web-1", Name: "web", Tags: []string{"v1", "edge"}, Address: "10.0.0.9", Port: 8080,
		Meta: map[string]string{"team": "blue"}, Checks: []Check{{ID: "service:web-1", Name: "ttl", Status: Critical, Type: "ttl"}}}
	consulRec, err := reg.Record("agent-a", 7, 1000)
	if err != nil {
		t.Fatal(err)
	}
	app := routes.Znode{Path: routes.InstancePath("shop", "10.0.0.1:20880"), Owner: 7,
		Data: routes.CuratorInstanceJSON("shop", "10.0.0.1:20880", "10.0.0.1", 20880, map[string]string{"dubbo.metadata.revision": "abc"}, 1)}
	tab.ApplyLocal([]routes.Record{
		{Broker: &routes.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: 0, Addr: "10.0.0.2:10911"}},
		{URL: &routes.URL{Interface: "org.demo.Greeter", Category: "providers", URL: url}},
		{URL: &routes.URL{Interface: "spring-app", Category: "nacos", URL: "nacos://10.0.0.3:8080/spring-app?k=v&nacos.healthy=false"}},
		{Znode: &app},
		consulRec,
	}, nil)

	b := Lookup(tab, BrokerService)
	if len(b) != 1 || b[0].ID != "rocketmq-broker:broker-a:0" || b[0].Address != "10.0.0.2" || b[0].Port != 10911 ||
		b[0].Node != "agent-a" || !reflect.DeepEqual(b[0].Tags, []string{"cluster=DefaultCluster", "broker=broker-a", "id=0", "master"}) {
		t.Errorf("broker: %+v", b)
	}
	d := Lookup(tab, "org.demo.Greeter")
	if len(d) != 1 || d[0].Meta[DubboURLMeta] != url || d[0].Port != 20880 || d[0].Tags[len(d[0].Tags)-1] != DubboTag ||
		!strings.HasPrefix(d[0].ID, "dubbo-") || d[0].Status() != Passing {
		t.Errorf("dubbo provider: %+v", d)
	}
	a := Lookup(tab, "shop")
	if len(a) != 1 || a[0].ID != "10.0.0.1:20880" || a[0].Meta["dubbo.metadata.revision"] != "abc" || a[0].Source != FromApp {
		t.Errorf("app instance: %+v", a)
	}
	n := Lookup(tab, "spring-app")
	if len(n) != 1 || n[0].Meta["k"] != "v" || n[0].Status() != Critical || n[0].Source != FromNacos {
		t.Errorf("nacos instance: %+v", n)
	}
	c := Lookup(tab, "web")
	want := Instance{Node: "agent-a", ID: "web-1", Name: "web", Tags: []string{"v1", "edge"}, Address: "10.0.0.9", Port: 8080,
		Meta: map[string]string{"team": "blue"}, Checks: reg.Checks, Source: FromConsul, Key: routes.ZnodeKey(Path("web", "web-1", "agent-a"), "")}
	if len(c) != 1 || !reflect.DeepEqual(c[0], want) {
		t.Errorf("consul registration read back:\n got %+v\nwant %+v", c, want)
	}
	if c[0].Status() != Critical {
		t.Errorf("status %s, want critical", c[0].Status())
	}
	names := Names(tab)
	if len(names) != 5 || !reflect.DeepEqual(names["web"], []string{"edge", "v1"}) {
		t.Errorf("names: %v", names)
	}
}

// A registration past a bound is refused, naming it.
func TestRegistrationBounds(t *testing.T) {
	for _, tc := range []struct {
		reg  Registration
		want string
	}{
		{Registration{ID: "x"}, "Missing service name"},
		{Registration{Name: "a/b", ID: "x"}, "holds '/'"},
		{Registration{Name: "a", ID: "x", Meta: map[string]string{"a.b": "v"}}, "Key contains invalid characters"},
		{Registration{Name: "a", ID: "x", Meta: map[string]string{"consul-x": "v"}}, "reserved"},
		{Registration{Name: "a", ID: "x", Port: 70000}, "port"},
		{Registration{Name: "a", ID: "x", Tags: make([]string, MaxTags+1)}, "more than 64"},
		{Registration{Name: "a", ID: "x", Meta: map[string]string{"k": strings.Repeat("v", MaxMetaValue+1)}}, "Value is too long"},
	} {
		if _, err := tc.reg.Record("n", 1, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.reg, err, tc.want)
		}
	}
}

func TestWorst(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, Passing}, {[]string{Passing, Warning}, Warning}, {[]string{Warning, Critical, Passing}, Critical}, {[]string{"bogus"}, Critical}} {
		var cs []Check
		for _, s := range tc.in {
			cs = append(cs, Check{Status: s})
		}
		if got := Worst(cs); got != tc.want {
			t.Errorf("Worst(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
