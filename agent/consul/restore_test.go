package consul

import (
	"testing"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/routes"
)

// The contract every door keeps with the agent (package doorkit).
func TestDoorContract(t *testing.T) { doortest.Contract(t, &ConsulSettings{}) }

// A registration is held under a lease whose state brings it back after
// the agent's restart: the restarted door lists it, its TTL check takes
// updates again, and its status is where the record left it.
func TestRegistrationComesBackAfterRestart(t *testing.T) {
	d := newDoor(t)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"ID": "web-1", "Name": "web", "Port": 80,
		"Check": map[string]any{"CheckID": "alive", "TTL": "1m"}}, nil)
	d.ok("PUT", "/v1/agent/check/pass/alive", nil, nil)
	l, ok := d.host.Lease(leaseDoor, "web-1")
	if !ok || len(l.Keys) != 1 {
		t.Fatalf("no lease for the registration: %+v %v", l, ok)
	}
	rec, _ := d.host.Routes.LocalRecord(l.Keys[0])

	// The restarted agent: its records republished from the lease, then
	// the door started.
	tab := routes.NewTable("agent-a", 2)
	tab.ApplyLocal([]routes.Record{rec}, nil)
	h := hosttest.New(tab)
	h.Restore(l)
	s, err := New(Config{Host: h, Agent: d.agent, Node: "agent-a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.reg.restore()
	d2 := &door{t: t, s: s, host: h, agent: d.agent}
	var checks map[string]healthCheck
	d2.ok("GET", "/v1/agent/checks", nil, &checks)
	if checks["alive"].Status != catalog.Passing {
		t.Fatalf("restored checks: %+v", checks)
	}
	d2.ok("PUT", "/v1/agent/check/fail/alive?note=down", nil, nil)
	if in := catalog.Lookup(tab, "web"); len(in) != 1 || in[0].Status() != catalog.Critical {
		t.Fatalf("after a fail on the restarted door: %+v", in)
	}
	d2.ok("PUT", "/v1/agent/service/deregister/web-1", nil, nil)
	if _, ok := h.Lease(leaseDoor, "web-1"); ok {
		t.Error("the lease outlives the deregistration")
	}
}
