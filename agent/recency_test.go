package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// A broker that moves registers on its new agent while its old
// registration is still held (until its lease ends). Every agent must serve
// the newest address within propagation time, whichever agent's name sorts
// first: the views used to take the lower origin name, so a move to a
// higher-named agent was not seen until the old lease expired. Moving back
// while the other registration is still held is a move too.
func TestNewestBrokerAddressServedEverywhere(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	put := func(i int, addr string) {
		t.Helper()
		reg := brokerReg("roamer", addr, "Roams")
		reg["ttl"] = "5m" // held through the whole test: only recency decides
		if status, _ := call(t, "PUT", c.Agent(i).HTTPAddr(), "/v1/brokers", reg, nil); status != http.StatusOK {
			t.Fatalf("PUT on agent-%d: %d", i, status)
		}
	}
	for _, step := range []struct {
		agent int
		addr  string
	}{
		{0, "10.0.0.1:10911"}, // first registration
		{1, "10.0.0.2:10911"}, // moves to a higher-named agent
		{2, "10.0.0.3:10911"}, // and on
		{0, "10.0.0.1:10911"}, // back: agent-0's record has this content already
		{1, "10.0.0.4:10911"}, // a new address where an older one is held
	} {
		put(step.agent, step.addr)
		everywhere(t, c, 10*time.Second, func(addr string) error {
			if got := routeAddr(t, addr, "Roams"); got != step.addr {
				return fmt.Errorf("serves %q after the registration on agent-%d, want %q", got, step.agent, step.addr)
			}
			return nil
		})
	}
}
