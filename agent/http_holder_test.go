package agent_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// A registration is withdrawn through the agent it was made with. Asked
// of another agent, the 404 names the agent that holds it and where its
// HTTP API listens, so the operator knows where to go.
func TestUnregisterThroughAnotherAgentNamesTheHolder(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 2)
	http0, http1 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr()
	const provider = "dubbo://10.1.0.9:20880/com.example.Held?version=1.0.0"
	if status, _ := call(t, "PUT", http0, "/v1/urls", map[string]string{"url": provider}, nil); status != 200 {
		t.Fatalf("register url: %d", status)
	}
	if status, _ := call(t, "PUT", http0, "/v1/brokers", brokerReg("broker-held", "10.1.0.1:10911", "Held"), nil); status != 200 {
		t.Fatalf("register broker: %d", status)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if u := urlsOf(t, addr, "com.example.Held"); len(u) != 1 {
			return fmt.Errorf("providers: %v", u)
		}
		return wantRoute(t, "Held", "10.1.0.1:10911")(addr)
	})
	holder := fmt.Sprintf("held by agent %q (HTTP API %s)", c.Agent(0).Name(), http0)
	for _, path := range []string{"/v1/urls?url=" + url.QueryEscape(provider), "/v1/brokers/DefaultCluster/broker-held/0"} {
		var out struct{ Error string }
		if status, _ := call(t, "DELETE", http1, path, nil, &out); status != 404 || !strings.Contains(out.Error, holder) {
			t.Errorf("DELETE %s through agent 1: %d %q, want 404 naming %s", path, status, out.Error, holder)
		}
	}
	// Nothing was withdrawn.
	if u := urlsOf(t, http1, "com.example.Held"); len(u) != 1 {
		t.Errorf("providers after the refused DELETE: %v", u)
	}
	// A record nobody holds says where a registration is withdrawn.
	var out struct{ Error string }
	if status, _ := call(t, "DELETE", http1, "/v1/urls?url="+url.QueryEscape("dubbo://10.1.0.10:20880/com.example.Nobody"), nil, &out); status != 404 ||
		!strings.Contains(out.Error, "withdrawn through the agent it was made with") {
		t.Errorf("DELETE of an unknown URL: %d %q", status, out.Error)
	}
}
