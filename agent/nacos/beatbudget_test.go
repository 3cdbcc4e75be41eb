package nacos

import (
	"net/url"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/routes"
)

// A beat that would register its instance past the record budget is
// refused as a registration past it is: 503 with the budget's message,
// not 500.
func TestBeatPastTheBudgetIs503(t *testing.T) {
	reg := hosttest.New(routes.NewTable("local", 1))
	reg.Budget = routes.Budget{Records: 1}
	s := startOn(t, reg)
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"bb"}, "ip": {"10.0.0.1"}, "port": {"1"}}); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"bb"}, "ip": {"10.0.0.2"}, "port": {"1"}})
	if code != 503 {
		t.Fatalf("register past the budget: %d %s, want 503", code, body)
	}
	beat := url.Values{"serviceName": {"bb"}, "beat": {`{"ip":"10.0.0.3","port":1,"serviceName":"bb"}`}}
	if code, got := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", beat); code != 503 || got != body {
		t.Errorf("beat registering past the budget: %d %s, want 503 %s", code, got, body)
	}
	if code, got := do(t, s, "PUT", "/nacos/v2/ns/instance/beat", beat); code != 503 || !strings.Contains(got, "budget") {
		t.Errorf("v2 beat registering past the budget: %d %s, want 503", code, got)
	}
}
