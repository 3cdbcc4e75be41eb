package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// waitOutput waits until out has want at least n times.
func waitOutput(t *testing.T, out *testutil.Buffer, want string, n int) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, func() error {
		if got := strings.Count(out.String(), want); got < n {
			return fmt.Errorf("%q printed %d times, want %d; output:\n%s", want, got, n, out.String())
		}
		return nil
	})
}

// start runs the program with args until the returned stop is called.
func start(t *testing.T, args ...string) (out *testutil.Buffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &testutil.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, out) }()
	stopped := false
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run %q: %v", args, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("run %q did not return after interrupt", args)
		}
	}
	t.Cleanup(stop)
	return out, stop
}

func TestBrokerRenewsAndProducerFollows(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 2)
	// The broker beside agent-0 and the producer beside agent-1: the route
	// crosses the cluster. A 1 s TTL renewed every 250 ms stands in for
	// RocketMQ's 120 s and 30 s.
	producer, _ := start(t, "--role", "producer", "--http", c.Agent(1).HTTPAddr(), "--messages", "5")
	waitOutput(t, producer, "producer: no route for TopicTest", 1)
	broker, stopBroker := start(t, "--role", "broker", "--http", c.Agent(0).HTTPAddr(), "--ttl", "1s", "--renew", "250ms")
	waitOutput(t, broker, "broker: broker-a registered at 127.0.0.1:10911 with ttl 1s", 1)
	waitOutput(t, producer, "producer: TopicTest has 4 write queues on 1 broker(s)\n", 1)
	for i, q := range []int{0, 1, 2, 3, 0} {
		waitOutput(t, producer, fmt.Sprintf("producer: message %d -> broker-a queue %d at 127.0.0.1:10911\n", i, q), 1)
	}
	// Six renewals span more than the TTL: renewing is what keeps the
	// route, since it was never withdrawn meanwhile.
	waitOutput(t, broker, "broker: broker-a renewed", 6)
	if strings.Count(producer.String(), "no route") != 1 {
		t.Fatalf("the route lapsed while the broker renewed it:\n%s", producer.String())
	}
	stopBroker()
	waitOutput(t, broker, "broker: broker-a unregistered", 1)
	waitOutput(t, producer, "producer: no route for TopicTest", 2)
}

func TestBothRolesInOneProcess(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 1)
	out, stop := start(t, "--http", c.Agent(0).HTTPAddr(), "--topic", "Orders", "--queues", "2", "--messages", "3")
	waitOutput(t, out, "producer: message 2 -> broker-a queue 0 at 127.0.0.1:10911\n", 1)
	stop()
	waitOutput(t, out, "broker: broker-a unregistered", 1)
}
