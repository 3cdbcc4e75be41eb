package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/internal/testutil"
)

// waitOutput waits until the output has want at least n times.
func waitOutput(t *testing.T, out *testutil.Buffer, want string, n int) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, func() error {
		if got := strings.Count(out.String(), want); got < n {
			return fmt.Errorf("%q printed %d times, want %d; output:\n%s", want, got, n, out.String())
		}
		return nil
	})
}

func TestConsumerFollowsProviders(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testutil.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--http", c.Agent(0).HTTPAddr(), "--interface", "com.example.Greeter"}, out)
	}()
	waitOutput(t, out, "com.example.Greeter providers: none", 1)
	waitOutput(t, out, "com.example.Greeter routers: none", 1)
	waitOutput(t, out, "com.example.Greeter configurators: none", 1)

	// A provider comes on the other agent, then goes.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	other, err := client.NewClient(client.Config{Address: c.Agent(1).HTTPAddr(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	provider := "dubbo://127.0.0.1:20880/com.example.Greeter?interface=com.example.Greeter&side=provider&version=1.0.0"
	if _, err := other.RegisterURL(ctx, provider, 0); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "com.example.Greeter providers: 1\n  "+provider+"\n", 1)
	if err := other.UnregisterURL(ctx, provider); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "com.example.Greeter providers: none", 2)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after interrupt")
	}
}
