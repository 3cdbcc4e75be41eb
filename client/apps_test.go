package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// Against two real agents: an instance registered on agent 0 is listed by
// agent 1 as an application; a watch on it sees it come and go.
func TestAppsAcrossAgents(t *testing.T) {
	c := agenttest.Start(t, 2)
	at := func(i int) *Client {
		cl, err := NewClient(Config{Address: c.Agent(i).HTTPAddr()})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	a, b := at(0), at(1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, _, err := b.App(ctx, "greeter", nil); !IsNotFound(err) {
		t.Fatalf("an unknown application: %v, want not found", err)
	}
	seen := make(chan AppDetail, 16)
	go b.WatchApp(ctx, "greeter", func(d AppDetail, err error) {
		if err == nil {
			seen <- d
		}
	})
	in, err := a.RegisterInstance(ctx, "greeter", InstanceRegistration{Address: "10.0.0.1", Port: 20000,
		Interfaces: []string{"org.demo.Greeter"}}, time.Minute)
	if err != nil || in.ID != "10.0.0.1:20000" || in.Agent != c.Agent(0).Name() {
		t.Fatalf("RegisterInstance: %+v %v", in, err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		apps, _, err := b.Apps(ctx, nil)
		// The mapping (a rule) and the instance (agent 0's record) travel
		// separately: either may arrive first.
		if err != nil || len(apps) != 1 || apps[0].Name != "greeter" || apps[0].Instances != 1 ||
			len(apps[0].Interfaces) != 1 || apps[0].Interfaces[0] != "org.demo.Greeter" {
			return fmt.Errorf("agent 1 lists %+v (%v)", apps, err)
		}
		return nil
	})
	waitFor := func(n int) {
		t.Helper()
		for {
			select {
			case d := <-seen:
				if len(d.Instances) == n {
					return
				}
			case <-ctx.Done():
				t.Fatalf("the watch never saw %d instances", n)
			}
		}
	}
	waitFor(1)
	if err := a.UnregisterInstance(ctx, "greeter", in.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(0)
	if err := a.UnregisterInstance(ctx, "greeter", in.ID); !IsNotFound(err) {
		t.Fatalf("a second unregister: %v, want not found", err)
	}
}
