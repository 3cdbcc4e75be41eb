package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/internal/testutil"
)

func needNacos(t *testing.T, reg registries) {
	t.Helper()
	if reg.nacos == nil {
		t.Skip("the Nacos door: run against agents, not -registries")
	}
}

// The example on nacos://: the provider registers through agent A's Nacos
// door in dubbo-go's default, application-level discovery (the
// application as a Nacos service, the interface → application mapping as
// a config), which is the application every agent's HTTP API, CLI and
// ZooKeeper door show, held by agent A; the consumer on agent B's Nacos
// door calls it.
//
//  1. Stopped (SIGTERM: dubbo-go deregisters), the provider is gone from
//     every agent and the consumer's calls fail with no provider.
//  2. A provider killed with -9 (its gRPC connection closes) is gone from
//     every agent within the agents' --nacos-grace + 1 s.
func TestGreeterOverNacos(t *testing.T) {
	reg := startRegistries(t)
	needNacos(t, reg)
	bin := buildExample(t)
	p := startProcess(t, bin, "provider", reg.nacos[0], "-role", "provider", "-port", fmt.Sprint(freePort(t)))
	testutil.Eventually(t, 60*time.Second, appInstances(t, reg, greeterApp, 1))
	testutil.Eventually(t, 10*time.Second, dialAll(t, reg.all).instances(1)) // ZooKeeper's /services/{app}
	d, _ := reg.agents.Agent(1).Table().App(greeterApp)
	if d.Instances[0].Agent != reg.agents.Agent(0).Name() {
		t.Fatalf("the instance's agent is %q, want the provider's, %q", d.Instances[0].Agent, reg.agents.Agent(0).Name())
	}
	if out := namecastCLI(t, reg, 1, "apps", greeterApp); !strings.Contains(out, d.Instances[0].ID) || !strings.Contains(out, reg.agents.Agent(0).Name()) {
		t.Fatalf("namecast apps %s printed:\n%s", greeterApp, out)
	}
	c := startProcess(t, bin, "consumer", reg.nacos[1], "-role", "consumer", "-name", "nacos", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello nacos, from 127.0.0.1:")
	t.Logf("consumer via %s called the provider registered via %s", reg.nacos[1], reg.nacos[0])
	p.signal(t, syscall.SIGTERM)
	testutil.Eventually(t, 30*time.Second, appInstances(t, reg, greeterApp, 0))
	c.waitLine(t, 30*time.Second, "CALL error")

	p2 := startProcess(t, bin, "provider-2", reg.nacos[0], "-role", "provider", "-port", fmt.Sprint(freePort(t)))
	testutil.Eventually(t, 60*time.Second, appInstances(t, reg, greeterApp, 1))
	c.waitLine(t, 60*time.Second, "CALL ok hello nacos")
	p2.signal(t, syscall.SIGKILL)
	holder, everywhere := appGone(t, reg, greeterApp, 60*time.Second)
	t.Logf("provider killed -9: its instance gone from its agent after %v, from every agent after %v",
		holder.Round(time.Millisecond), everywhere.Round(time.Millisecond))
	// The door's promise is its own agent's withdrawal within the grace;
	// the other agents follow by gossip, whose pace on a loaded 2-core
	// race build is no promise of the door's (it can pass a bound of 1 s
	// on the whole).
	if grace := time.Duration(nacos.DefaultGrace); holder > grace+time.Second {
		t.Errorf("killed provider's instance gone from its agent after %v, want <= --nacos-grace %v + 1s", holder, grace)
	}
	if spread := everywhere - holder; spread > 5*time.Second {
		t.Errorf("killed provider's instance gone from every agent %v after its own, want <= 5s", spread)
	}
	testutil.Eventually(t, 30*time.Second, appInstances(t, reg, greeterApp, 0)) // and from the HTTP API
	c.waitLine(t, 30*time.Second, "CALL error")
}

// appGone polls every agent's table (in process: a poll costs no HTTP
// round trips, which under load would blur the measure) until none shows
// an instance of app, and says when agent 0, the provider's, stopped
// showing it and when the last did, from now.
func appGone(t *testing.T, reg registries, app string, timeout time.Duration) (holder, everywhere time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		left := 0
		for i := range reg.all {
			if d, ok := reg.agents.Agent(i).Table().App(app); ok && len(d.Instances) > 0 {
				left++
			} else if i == 0 && holder == 0 {
				holder = time.Since(start)
			}
		}
		if left == 0 {
			return holder, time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("killed provider's instance still shown by %d agents after %v", left, timeout)
		}
		time.Sleep(5 * time.Millisecond) // a poll: the measurement's resolution
	}
}

// One registry behind two doors: a provider registered through one
// agent's Nacos door is called by a consumer on another agent's ZooKeeper
// door, and the other way round, registering by application (dubbo-go's
// default: every agent shows the application's instance, and the mapping
// names its interface, however it came) or Dubbo 2 style URLs
// (-register-mode interface: every agent lists the provider's URL).
func TestGreeterAcrossDoors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode string
		door func(reg registries) (provider, consumer string)
	}{
		{"interface/nacos-to-zookeeper", "interface", func(r registries) (string, string) { return r.nacos[0], r.b }},
		{"interface/zookeeper-to-nacos", "interface", func(r registries) (string, string) { return r.a, r.nacos[1] }},
		{"instance/nacos-to-zookeeper", "instance", func(r registries) (string, string) { return r.nacos[0], r.b }},
		{"instance/zookeeper-to-nacos", "instance", func(r registries) (string, string) { return r.a, r.nacos[1] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := startRegistries(t)
			needNacos(t, reg)
			bin := buildExample(t)
			pr, cr := tc.door(reg)
			startProcess(t, bin, "provider", pr, "-role", "provider", "-register-mode", tc.mode, "-port", fmt.Sprint(freePort(t)))
			if tc.mode == "interface" {
				testutil.Eventually(t, 60*time.Second, providerURLs(t, reg, 1))
			} else {
				testutil.Eventually(t, 60*time.Second, appInstances(t, reg, greeterApp, 1))
			}
			c := startProcess(t, bin, "consumer", cr, "-role", "consumer", "-register-mode", tc.mode, "-name", "doors", "-every", "100ms")
			c.waitLine(t, 60*time.Second, "CALL ok hello doors, from 127.0.0.1:")
			t.Logf("consumer via %s called the provider registered via %s", cr, pr)
		})
	}
}

// An instance registered over HTTP on agent A (with its interfaces: the
// agent writes the mapping and the remote metadata) is called by a
// consumer on agent B's Nacos door in application-level mode: it reads
// the mapping and the metadata as Nacos configs, and the instance as a
// Nacos instance of the application.
func TestNacosConsumerCallsInstanceRegisteredOverHTTP(t *testing.T) {
	reg := startRegistries(t)
	needNacos(t, reg)
	bin := buildExample(t)
	port := freePort(t)
	p := startProcess(t, bin, "provider", reg.a, "-role", "provider", "-register=false", "-port", fmt.Sprint(port))
	p.waitLine(t, 60*time.Second, "PROVIDER serving")
	in, err := agent.Door[*httpapi.Server](reg.agents.Agent(0)).RegisterInstance(httpapi.InstanceRegistration{App: greeterApp, Address: "127.0.0.1", Port: port,
		Interfaces: []string{greeterIface}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, appInstances(t, reg, greeterApp, 1))
	c := startProcess(t, bin, "consumer", reg.nacos[1], "-role", "consumer", "-name", "http", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello http, from 127.0.0.1:"+fmt.Sprint(port))
	t.Logf("consumer via %s called instance %s registered over HTTP on %s", reg.nacos[1], in.ID, reg.agents.Agent(0).Name())
	if ok, err := agent.Door[*httpapi.Server](reg.agents.Agent(0)).UnregisterInstance(greeterApp, in.ID); !ok || err != nil {
		t.Fatalf("unregister: %v %v", ok, err)
	}
	c.waitLine(t, 30*time.Second, "CALL error")
}
