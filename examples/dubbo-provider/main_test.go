package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/internal/testutil"
)

func TestProviderRegistersUntilInterrupted(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 2)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	other, err := client.NewClient(client.Config{Address: c.Agent(1).HTTPAddr(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	providers := func() ([]string, error) {
		urls, _, err := other.URLs(context.Background(), "com.example.Greeter", client.CategoryProviders, nil)
		if client.IsNotFound(err) {
			return nil, nil
		}
		return urls, err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testutil.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--http", c.Agent(0).HTTPAddr(), "--interface", "com.example.Greeter", "--addr", "127.0.0.1:20880"}, out)
	}()

	// The provider registered on agent-0 is served by agent-1.
	testutil.Eventually(t, 10*time.Second, func() error {
		urls, err := providers()
		if err != nil {
			return err
		}
		if len(urls) != 1 || !strings.HasPrefix(urls[0], "dubbo://127.0.0.1:20880/com.example.Greeter?") {
			return fmt.Errorf("providers %q", urls)
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after interrupt")
	}
	if got := out.String(); !strings.Contains(got, "registered dubbo://") || !strings.Contains(got, "unregistered dubbo://") {
		t.Fatalf("output:\n%s", got)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if urls, err := providers(); err != nil || len(urls) != 0 {
			return errors.Join(err, fmt.Errorf("providers %q after exit", urls))
		}
		return nil
	})
}
