package agent_test

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

// Over HTTP, a registration or withdrawal the data dir cannot save is
// refused with 503 and the reason, and changes nothing: the new URL is
// not served, the withdrawn one still is. Once the disk takes writes
// again, the withdrawal goes through and a restart does not bring it
// back. Before, both answered 200: the new URLs were lost at the next
// restart, and withdrawn ones came back (issue 24, item 1).
func TestHTTPChangeThatCannotBeSavedIsRefused(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	keep, gone := "dubbo://10.9.0.1:20880/com.example.Full", "dubbo://10.9.0.2:20880/com.example.Full"
	for _, u := range []string{keep, gone} {
		if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": u}, nil); status != 200 {
			t.Fatalf("register %s: %d", u, status)
		}
	}
	heal := agent.BreakLeaseLog(a)
	var body map[string]string
	status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": "dubbo://10.9.0.3:20880/com.example.Full"}, &body)
	if status != 503 || !strings.Contains(body["error"], "data dir") {
		t.Fatalf("unsavable registration: %d %v, want 503 naming the data dir", status, body)
	}
	if status, _ := call(t, "DELETE", a.HTTPAddr(), "/v1/urls?url="+url.QueryEscape(gone), nil, nil); status != 503 {
		t.Fatalf("unsavable withdrawal: %d, want 503", status)
	}
	if got := urlsOf(t, a.HTTPAddr(), "com.example.Full"); len(got) != 2 {
		t.Fatalf("after refused changes the agent serves %q, want the 2 registered", got)
	}
	heal()
	if status, _ := call(t, "DELETE", a.HTTPAddr(), "/v1/urls?url="+url.QueryEscape(gone), nil, nil); status != 200 {
		t.Fatalf("withdrawal once the disk takes writes: %d", status)
	}
	saved, err := agent.SavedLeases(filepath.Join(dir, "agent-0"))
	if err != nil {
		t.Fatal(err)
	}
	for id := range saved {
		if strings.Contains(id, "10.9.0.2") || strings.Contains(id, "10.9.0.3") {
			t.Fatalf("a restart would restore %s", id)
		}
	}
	if len(saved) != 1 {
		t.Fatalf("a restart would restore %d registrations, want 1", len(saved))
	}
}
