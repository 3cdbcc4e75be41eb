package nacos

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/namecast/namecast/internal/testutil"
)

// Dubbo's NacosRegistry names a provider's service so and puts the URL's
// parameters in the instance's metadata.
const dubboService = "providers:org.apache.dubbo.demo.DemoService:1.0.0:"

func dubboParam(ip string, port uint64) vo.RegisterInstanceParam {
	return vo.RegisterInstanceParam{Ip: ip, Port: port, Weight: 1, Enable: true, Healthy: true, Ephemeral: true,
		ServiceName: dubboService, Metadata: map[string]string{"protocol": "tri", "path": "org.apache.dubbo.demo.DemoService",
			"interface": "org.apache.dubbo.demo.DemoService", "version": "1.0.0", "side": "provider", "category": "providers",
			"methods": "sayHello,sayHelloAsync", "application": "demo-provider"}}
}

func addrs(insts []model.Instance) string {
	var out []string
	for _, in := range insts {
		if in.Enable && in.Healthy {
			out = append(out, fmt.Sprintf("%s:%d", in.Ip, in.Port))
		}
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// latest keeps what a subscription callback was last told.
type latest struct {
	mu    sync.Mutex
	insts []model.Instance
	told  []string // every callback's addresses, in order
}

func (l *latest) callback(insts []model.Instance, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.insts, l.told = insts, append(l.told, addrs(insts))
}

func (l *latest) is(want string) func() error {
	return func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if got := addrs(l.insts); got != want {
			return fmt.Errorf("subscriber holds %s after callbacks %v, want %s", got, l.told, want)
		}
		return nil
	}
}

// A provider registers through agent 0 and a subscriber on agent 1 is
// told, with the URL's parameters intact; the same provider is a Dubbo URL
// record on agent 1; deregistering tells the subscriber again.
func TestRegisterSubscribeDeregisterAcrossAgents(t *testing.T) {
	c, doors := cluster(t, 2)
	prov, sub := namingClient(t, doors[0]), namingClient(t, doors[1])
	var l latest
	if err := sub.Subscribe(&vo.SubscribeParam{ServiceName: dubboService, SubscribeCallback: l.callback}); err != nil {
		t.Fatal(err)
	}
	if ok, err := prov.RegisterInstance(dubboParam("10.0.0.5", 50051)); !ok || err != nil {
		t.Fatalf("register: %v %v", ok, err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if err := l.is("[10.0.0.5:50051]")(); err != nil {
			return fmt.Errorf("%v; agent 1 holds %q", err, c.Agent(1).Table().URLs("org.apache.dubbo.demo.DemoService", ""))
		}
		return nil
	})
	l.mu.Lock()
	md := l.insts[0].Metadata
	l.mu.Unlock()
	if md["methods"] != "sayHello,sayHelloAsync" || md["protocol"] != "tri" || md["path"] != "org.apache.dubbo.demo.DemoService" {
		t.Fatalf("metadata %v", md)
	}
	want := "tri://10.0.0.5:50051/org.apache.dubbo.demo.DemoService?application=demo-provider&category=providers" +
		"&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&side=provider&version=1.0.0"
	if got := c.Agent(1).Table().URLs("org.apache.dubbo.demo.DemoService", "providers"); fmt.Sprint(got) != "["+want+"]" {
		t.Fatalf("agent 1's URL records %q, want %s", got, want)
	}
	insts, err := sub.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: dubboService})
	if err != nil || addrs(insts) != "[10.0.0.5:50051]" {
		t.Fatalf("select: %v %v", insts, err)
	}
	p := dubboParam("10.0.0.5", 50051)
	if ok, err := prov.DeregisterInstance(vo.DeregisterInstanceParam{Ip: p.Ip, Port: p.Port, ServiceName: dubboService, Ephemeral: true}); !ok || err != nil {
		t.Fatalf("deregister: %v %v", ok, err)
	}
	testutil.Eventually(t, 10*time.Second, l.is("[]"))
}

// A Spring Cloud style service in its own namespace-free group and
// cluster, registered on both agents, is listed by either.
func TestPlainServiceOnTwoAgents(t *testing.T) {
	_, doors := cluster(t, 2)
	a, b := namingClient(t, doors[0]), namingClient(t, doors[1])
	for i, nc := range []interface {
		RegisterInstance(vo.RegisterInstanceParam) (bool, error)
	}{a, b} {
		ok, err := nc.RegisterInstance(vo.RegisterInstanceParam{Ip: "10.0.1.1", Port: uint64(8080 + i), Weight: 1, Enable: true,
			Healthy: true, Ephemeral: true, ServiceName: "orders", GroupName: "shop", ClusterName: "east",
			Metadata: map[string]string{"zone": "a"}})
		if !ok || err != nil {
			t.Fatalf("register %d: %v %v", i, ok, err)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for i, nc := range []interface {
			SelectAllInstances(vo.SelectAllInstancesParam) ([]model.Instance, error)
		}{a, b} {
			insts, err := nc.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: "orders", GroupName: "shop", Clusters: []string{"east"}})
			if err != nil {
				return err
			}
			if got := addrs(insts); got != "[10.0.1.1:8080 10.0.1.1:8081]" {
				return fmt.Errorf("agent %d lists %s", i, got)
			}
		}
		return nil
	})
	list, err := b.GetAllServicesInfo(vo.GetAllServiceInfoParam{GroupName: "shop", PageNo: 1, PageSize: 10})
	if err != nil || fmt.Sprint(list.Doms) != "[orders]" {
		t.Fatalf("service list %+v %v", list, err)
	}
}
