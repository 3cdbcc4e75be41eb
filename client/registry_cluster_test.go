package client

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// These tests hold the Registry to the notify contract against real
// agents: three in-process agents on loopback, with the harness's fast
// failure detection (a crashed agent is declared dead in about 1–2 s).

// failureWait bounds how long a change caused by a crash may take: SWIM's
// detection plus the gossip of the withdrawal, with room for a loaded
// race-enabled run.
const failureWait = 20 * time.Second

// clusterRegistry is a Registry on the HTTP API of agent i, closed with
// the test.
func clusterRegistry(t *testing.T, c *agenttest.Cluster, i int, opts RegistryOptions) *Registry {
	t.Helper()
	return registryAt(t, c.Agent(i).HTTPAddr(), opts)
}

func registryAt(t *testing.T, addr string, opts RegistryOptions) *Registry {
	t.Helper()
	tr := &http.Transport{}
	c, err := NewClient(Config{Address: addr, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	c.backoffMin = 50 * time.Millisecond
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = 500 * time.Millisecond
	}
	opts.Logger = testLogger(opts.Logger)
	r, err := NewRegistry(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.Close() // the agent may be gone: unregistering can fail
		tr.CloseIdleConnections()
	})
	return r
}

// urlsOn lists iface's URLs in category as agent i serves them.
func urlsOn(t *testing.T, c *agenttest.Cluster, i int, category string) []string {
	t.Helper()
	cl, err := NewClient(Config{Address: c.Agent(i).HTTPAddr(), HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		t.Fatal(err)
	}
	urls, _, err := cl.URLs(ctxT(t), iface, category, nil)
	if err != nil && !IsNotFound(err) {
		t.Fatalf("agent-%d: %v", i, err)
	}
	return urls
}

var (
	greeter1 = canon("dubbo://127.0.0.1:20881/com.example.Greeter?side=provider&version=1.0")
	greeter2 = canon("dubbo://127.0.0.1:20882/com.example.Greeter?side=provider&version=1.0")
	greeter3 = canon("dubbo://127.0.0.1:20883/com.example.Greeter?side=provider&version=1.0")
	rule     = canon("route://0.0.0.0/com.example.Greeter?category=routers&dynamic=false&force=false&rule=host%3D127.0.0.1&version=1.0")
	greeting = "consumer://127.0.0.1/com.example.Greeter?category=providers,routers&side=consumer&version=1.0"
)

func TestClusterProvidersComeAndGo(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	consumer := clusterRegistry(t, c, 0, RegistryOptions{})
	ctx := ctxT(t)

	// Before any provider: the first notification is there when Subscribe
	// returns, one empty:// per category.
	early := &recorder{}
	if err := consumer.Subscribe(ctx, greeting, early); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{empty(greeting, "providers")}, {empty(greeting, "routers")}}
	if got := early.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("first notification %q, want %q", got, want)
	}

	// Providers register on the other agents: full lists arrive.
	p1 := clusterRegistry(t, c, 1, RegistryOptions{})
	p2 := clusterRegistry(t, c, 2, RegistryOptions{})
	if err := p1.Register(ctx, greeter1); err != nil {
		t.Fatal(err)
	}
	if err := p2.Register(ctx, greeter2); err != nil {
		t.Fatal(err)
	}
	early.waitFor(t, 10*time.Second, iface, "providers", greeter1, greeter2)

	// A subscriber after them gets both at once.
	late := &recorder{}
	if err := consumer.Subscribe(ctx, greeting, late); err != nil {
		t.Fatal(err)
	}
	want = [][]string{{greeter1, greeter2}, {empty(greeting, "routers")}}
	if got := late.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("late subscriber's first notification %q, want %q", got, want)
	}

	// Providers leave: the shrunken list, then empty://.
	if err := p2.Unregister(ctx, greeter2); err != nil {
		t.Fatal(err)
	}
	early.waitFor(t, 10*time.Second, iface, "providers", greeter1)
	if err := p1.Close(); err != nil {
		t.Fatal(err)
	}
	early.waitFor(t, 10*time.Second, iface, "providers", empty(greeting, "providers"))
	late.waitFor(t, 10*time.Second, iface, "providers", empty(greeting, "providers"))
	for _, rec := range []*recorder{early, late} {
		checkContract(t, rec.all())
		if n := rec.overlaps.Load(); n != 0 {
			t.Errorf("%d overlapping calls", n)
		}
	}
}

func TestClusterProviderAgentCrash(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	ctx := ctxT(t)
	consumer := clusterRegistry(t, c, 0, RegistryOptions{})
	rec := &recorder{}
	if err := consumer.Subscribe(ctx, greeting, rec); err != nil {
		t.Fatal(err)
	}
	if err := clusterRegistry(t, c, 1, RegistryOptions{}).Register(ctx, greeter1); err != nil {
		t.Fatal(err)
	}
	if err := clusterRegistry(t, c, 2, RegistryOptions{}).Register(ctx, greeter2); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, iface, "providers", greeter1, greeter2)

	start := time.Now()
	c.Crash(2)
	rec.waitFor(t, failureWait, iface, "providers", greeter1)
	t.Logf("crash of agent-2 to the shrunken list: %v", time.Since(start))
	start = time.Now()
	c.Crash(1)
	rec.waitFor(t, failureWait, iface, "providers", empty(greeting, "providers"))
	t.Logf("crash of agent-1 to empty://: %v", time.Since(start))
	checkContract(t, rec.all())
}

func TestClusterOwnAgentRestartReplays(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	ctx := ctxT(t)
	r := clusterRegistry(t, c, 1, RegistryOptions{})
	rec := &recorder{}
	if err := r.Subscribe(ctx, greeting, rec); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(ctx, greeter1); err != nil {
		t.Fatal(err)
	}
	if err := clusterRegistry(t, c, 0, RegistryOptions{}).Register(ctx, greeter2); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, iface, "providers", greeter1, greeter2)

	start := time.Now()
	c.Restart(1)
	// The new agent-1 started empty; the registry registers greeter1 on it
	// again, and the other agents see it again.
	testutil.Eventually(t, failureWait, func() error {
		for _, i := range []int{0, 1, 2} {
			if got := urlsOn(t, c, i, "providers"); !slices.Equal(got, []string{greeter1, greeter2}) {
				return fmt.Errorf("agent-%d serves %q", i, got)
			}
		}
		return nil
	})
	t.Logf("restart of agent-1 to its registration replayed everywhere: %v", time.Since(start))

	// The subscription follows the new agent.
	if err := clusterRegistry(t, c, 2, RegistryOptions{}).Register(ctx, greeter3); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, iface, "providers", greeter1, greeter2, greeter3)
	checkContract(t, rec.all())
}

func TestClusterAgentDownUsesCacheFile(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	ctx := ctxT(t)
	cache := filepath.Join(t.TempDir(), "consumer.cache")
	if err := clusterRegistry(t, c, 1, RegistryOptions{}).Register(ctx, greeter1); err != nil {
		t.Fatal(err)
	}
	if err := clusterRegistry(t, c, 2, RegistryOptions{}).Register(ctx, rule); err != nil {
		t.Fatal(err)
	}
	first := clusterRegistry(t, c, 0, RegistryOptions{CacheFile: cache})
	rec := &recorder{}
	if err := first.Subscribe(ctx, greeting, rec); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, iface, "providers", greeter1)
	rec.waitFor(t, 10*time.Second, iface, "routers", rule)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// The consumer's agent is gone; the process starts again beside it.
	addr := c.Agent(0).HTTPAddr()
	c.Crash(0)
	again := registryAt(t, addr, RegistryOptions{CacheFile: cache})
	rec = &recorder{}
	if err := again.Subscribe(ctx, greeting, rec); err != nil {
		t.Fatalf("Subscribe with the agent down: %v", err)
	}
	want := [][]string{{greeter1}, {rule}}
	if got := rec.all(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("notified %q, want %q from the cache", got, want)
	}
	got, err := again.Lookup(ctx, "consumer://127.0.0.1/com.example.Greeter?version=1.0")
	if err != nil || !slices.Equal(got, []string{greeter1}) {
		t.Fatalf("Lookup with the agent down: %q, %v", got, err)
	}
}

func TestClusterPersistentRulesOutliveTheirWriter(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	ctx := ctxT(t)
	consumer := clusterRegistry(t, c, 0, RegistryOptions{})
	rec := &recorder{}
	if err := consumer.Subscribe(ctx, greeting, rec); err != nil {
		t.Fatal(err)
	}
	writer := clusterRegistry(t, c, 2, RegistryOptions{})
	if err := writer.Register(ctx, rule); err != nil {
		t.Fatal(err)
	}
	if err := writer.Register(ctx, greeter3); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, iface, "routers", rule)
	rec.waitFor(t, 10*time.Second, iface, "providers", greeter3)

	// The writer's agent dies: its provider goes, the rule stays.
	c.Crash(2)
	rec.waitFor(t, failureWait, iface, "providers", empty(greeting, "providers"))
	if got := rec.last(iface, "routers"); !slices.Equal(got, []string{rule}) {
		t.Fatalf("routers %q after the writer died, want the rule", got)
	}
	// Agent-1 learns of the death on its own, a gossip round after or
	// before agent-0 did.
	other := clusterRegistry(t, c, 1, RegistryOptions{})
	testutil.Eventually(t, failureWait, func() error {
		got, err := other.Lookup(ctx, greeting)
		if err != nil || !slices.Equal(got, []string{rule}) {
			return fmt.Errorf("Lookup on agent-1 after the writer died: %q, %v", got, err)
		}
		return nil
	})

	// Any agent may delete a rule; a rule that is not there is an error.
	if err := other.Unregister(ctx, rule); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, 10*time.Second, iface, "routers", empty(greeting, "routers"))
	if err := other.Unregister(ctx, rule); err == nil || !IsNotFound(err) {
		t.Fatalf("deleting the deleted rule: %v, want not found", err)
	}
	if !errors.Is(consumer.Close(), nil) {
		t.Fatal("Close failed")
	}
	checkContract(t, rec.all())
}
