package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/internal/testutil"
)

// The example's names, as main.go has them.
const (
	greeterApp   = "namecast-greeter-provider"
	greeterIface = "org.namecast.demo.Greeter"
)

func needAgents(t *testing.T, reg registries) {
	t.Helper()
	if reg.agents == nil {
		t.Skip("namecast's own views: run against agents, not -registries")
	}
}

// apiOf is a Go client of agent i's HTTP API.
func apiOf(t *testing.T, reg registries, i int) *client.Client {
	t.Helper()
	c, err := client.NewClient(client.Config{Address: reg.agents.Agent(i).HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// appInstances is a condition: every agent answers GET /v1/apps/{app}
// with n instances, each an address on loopback with a revision and the
// agent that holds it, and the application maps the Greeter interface
// while n > 0.
func appInstances(t *testing.T, reg registries, app string, n int) func() error {
	return func() error {
		for i := range reg.all {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			d, _, err := apiOf(t, reg, i).App(ctx, app, nil)
			cancel()
			if client.IsNotFound(err) && n == 0 {
				continue
			}
			if err != nil {
				return fmt.Errorf("agent %d: GET /v1/apps/%s: %v", i, app, err)
			}
			if len(d.Instances) != n {
				return fmt.Errorf("agent %d lists %d instances of %s, want %d: %+v", i, len(d.Instances), app, n, d.Instances)
			}
			for _, in := range d.Instances {
				if in.Address != "127.0.0.1" || in.Port == 0 || in.Revision == "" || in.Agent == "" {
					return fmt.Errorf("agent %d: instance %+v", i, in)
				}
			}
			if n > 0 && !strings.Contains(strings.Join(d.Interfaces, ","), greeterIface) {
				return fmt.Errorf("agent %d: %s maps %v, want %s", i, app, d.Interfaces, greeterIface)
			}
		}
		return nil
	}
}

// providerURLs is a condition: every agent answers GET
// /v1/services/{Greeter} with n providers.
func providerURLs(t *testing.T, reg registries, n int) func() error {
	return func() error {
		for i := range reg.all {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			got, _, err := apiOf(t, reg, i).URLs(ctx, greeterIface, client.CategoryProviders, nil)
			cancel()
			if client.IsNotFound(err) && n == 0 {
				continue
			}
			if err != nil || len(got) != n {
				return fmt.Errorf("agent %d lists %d providers of %s, want %d: %v (%v)", i, len(got), greeterIface, n, got, err)
			}
		}
		return nil
	}
}

// namecastCLI runs the namecast command against agent i and returns its
// output; the binary is built once per test binary.
func namecastCLI(t *testing.T, reg registries, i int, args ...string) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "namecast-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliBin = filepath.Join(dir, "namecast")
		cmd := exec.Command("go", "build", "-o", cliBin, "github.com/namecast/namecast/cmd/namecast")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build cmd/namecast: %v\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	out, err := exec.Command(cliBin, append(args, "--http", reg.agents.Agent(i).HTTPAddr())...).CombinedOutput()
	if err != nil {
		t.Fatalf("namecast %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var (
	cliOnce sync.Once
	cliBin  string
	cliErr  error
)

// dubbo-go's default, application-level registration is an application
// with one instance on every agent, registered by the provider's agent;
// kill -9 of the provider removes it from every agent within the grace.
func TestGreeterIsAnApplication(t *testing.T) {
	reg := startRegistries(t)
	needAgents(t, reg)
	bin := buildExample(t)
	p := startProcess(t, bin, "provider", reg.a, "-role", "provider", "-port", fmt.Sprint(freePort(t)))
	testutil.Eventually(t, 60*time.Second, appInstances(t, reg, greeterApp, 1))
	d, _ := reg.agents.Agent(1).Table().App(greeterApp)
	if d.Instances[0].Agent != reg.agents.Agent(0).Name() {
		t.Fatalf("the instance's agent is %q, want the provider's, %q", d.Instances[0].Agent, reg.agents.Agent(0).Name())
	}
	// The CLI on the consumer's agent: the application, then its instance.
	if out := namecastCLI(t, reg, 1, "apps"); !strings.Contains(out, greeterApp) || !strings.Contains(out, greeterIface) {
		t.Fatalf("namecast apps printed:\n%s", out)
	}
	if out := namecastCLI(t, reg, 1, "apps", greeterApp); !strings.Contains(out, d.Instances[0].ID) || !strings.Contains(out, reg.agents.Agent(0).Name()) {
		t.Fatalf("namecast apps %s printed:\n%s", greeterApp, out)
	}
	if err := providerURLs(t, reg, 0)(); err != nil {
		t.Fatalf("application-level mode registered interface URLs: %v", err)
	}
	c := startProcess(t, bin, "consumer", reg.b, "-role", "consumer", "-name", "apps", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello apps")

	p.signal(t, syscall.SIGKILL)
	start := time.Now()
	testutil.Eventually(t, 60*time.Second, appInstances(t, reg, greeterApp, 0))
	gone := time.Since(start)
	t.Logf("provider killed -9: its instance gone from every agent's application view after %v", gone.Round(time.Millisecond))
	if gone > reg.grace+time.Second {
		t.Errorf("killed provider's instance gone after %v, want <= grace %v + 1s", gone, reg.grace)
	}
}

// -register-mode interface registers Dubbo 2 style URLs: a service on
// every agent, no application instance, and the consumer in the same mode
// calls it.
func TestGreeterInterfaceMode(t *testing.T) {
	reg := startRegistries(t)
	needAgents(t, reg)
	bin := buildExample(t)
	p := startProcess(t, bin, "provider", reg.a, "-role", "provider", "-register-mode", "interface", "-port", fmt.Sprint(freePort(t)))
	testutil.Eventually(t, 60*time.Second, providerURLs(t, reg, 1))
	if err := appInstances(t, reg, greeterApp, 0)(); err != nil {
		t.Fatalf("interface mode registered an instance: %v", err)
	}
	if out := namecastCLI(t, reg, 1, "services", greeterIface, "--urls"); !strings.Contains(out, "dubbo://") || !strings.Contains(out, "/"+greeterIface+"?") {
		t.Fatalf("namecast services %s printed:\n%s", greeterIface, out)
	}
	c := startProcess(t, bin, "consumer", reg.b, "-role", "consumer", "-register-mode", "interface", "-name", "urls", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello urls")
	p.signal(t, syscall.SIGKILL)
	testutil.Eventually(t, reg.grace+5*time.Second, providerURLs(t, reg, 0))
}

// An instance registered over HTTP on agent A, for a provider that serves
// without registering, is called by the consumer on agent B in dubbo-go's
// default application-level mode: it finds the application through the
// mapping, the instance under /services, and the interface in the remote
// metadata the registration wrote.
func TestConsumerCallsInstanceRegisteredOverHTTP(t *testing.T) {
	reg := startRegistries(t)
	needAgents(t, reg)
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
	c := startProcess(t, bin, "consumer", reg.b, "-role", "consumer", "-name", "http", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello http, from 127.0.0.1:"+fmt.Sprint(port))
	t.Logf("consumer via %s called instance %s registered over HTTP on %s", reg.b, in.ID, reg.agents.Agent(0).Name())

	if ok, err := agent.Door[*httpapi.Server](reg.agents.Agent(0)).UnregisterInstance(greeterApp, in.ID); !ok || err != nil {
		t.Fatalf("unregister: %v %v", ok, err)
	}
	c.waitLine(t, 30*time.Second, "CALL error")
}
