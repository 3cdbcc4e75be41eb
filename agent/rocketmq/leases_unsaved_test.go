package rocketmq

import (
	"errors"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
)

// A registration whose lease the agent cannot save is answered
// SYSTEM_ERROR saying so (the broker retries at its next registration),
// and an unregistration whose removal cannot be saved is answered
// SYSTEM_ERROR and withdraws nothing: a restart would otherwise bring
// back a broker its client was told is gone. Once the data dir takes
// writes, the unregistration goes through. Before, both were answered
// SUCCESS whatever the data dir did (then the unregistration still was).
func TestBrokerChangeThatCannotBeSavedIsNotAcknowledged(t *testing.T) {
	reg := newFake()
	s := startServer(t, reg)
	c := dial(t, s)
	b := brokerA()
	register(t, c, b)
	full := errors.New("saving to the data dir failed: no space left on device")
	hosttest.SetErr(&reg.LeaseErr, full)
	b.DataVersion.Counter++
	resp, err := c.Register(b)
	if err == nil || !strings.Contains(err.Error(), "code 1 ") || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("unsaved registration answered %v %v, want SYSTEM_ERROR naming the cause", resp, err)
	}
	if err := c.Unregister(b); err == nil || !strings.Contains(err.Error(), "code 1 ") || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("unsaved unregistration answered %v, want SYSTEM_ERROR naming the cause", err)
	}
	if route(t, c, "TopicTest") == nil {
		t.Fatal("an unregistration that could not be saved withdrew the broker")
	}
	hosttest.SetErr(&reg.LeaseErr, nil)
	if err := c.Unregister(b); err != nil {
		t.Fatal(err)
	}
	if route(t, c, "TopicTest") != nil {
		t.Fatal("the broker stayed after an unregistration that was saved")
	}
}
