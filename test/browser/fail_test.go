package browser

import (
	"strings"
	"testing"
	"time"
)

func TestAgentsFail(t *testing.T) {
	needBrowser(t)
	c := startCluster(t, 3, nil)
	if err := c.Agents[1].Put("/v1/brokers", map[string]any{"cluster": "C", "brokerName": "b2", "brokerId": 0,
		"addr": "192.0.2.2:10911", "topics": map[string]any{"OnAgent2": map[string]int{"readQueueNums": 1, "writeQueueNums": 1, "perm": 6}}}); err != nil {
		t.Fatal(err)
	}
	a3 := c.Agents[2]

	t.Run("KilledMemberTurnsDead", func(t *testing.T) {
		tab := newTab(t, 1280, 900)
		if err := tab.Open(a3.URL("/ui/members")); err != nil {
			t.Fatal(err)
		}
		alive := `document.querySelector('tr[data-member="agent-2"].alive') !== null`
		if err := tab.WaitFor(alive, 15*time.Second); err != nil {
			t.Fatal(err)
		}
		c.Kill(2) // SIGKILL: no leave, the process is just gone
		start := time.Now()
		dead := `(() => { const r = document.querySelector('tr[data-member="agent-2"]');
			return r && r.classList.contains('dead') && r.innerText.includes('dead'); })()`
		if err := tab.WaitFor(dead, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("agent-2 shown dead %v after SIGKILL", time.Since(start).Round(time.Millisecond))
	})

	t.Run("LostConnectionRecovers", func(t *testing.T) {
		tab := newTab(t, 1280, 900)
		if err := tab.Open(a3.URL("/ui/members")); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitFor(`document.querySelector('tr[data-member="agent-3"]') !== null`, 15*time.Second); err != nil {
			t.Fatal(err)
		}
		c.Kill(3) // the agent serving the page
		banner := `(() => { const b = document.getElementById('conn'); return !b.hidden && b.innerText.includes('Lost the connection'); })()`
		if err := tab.WaitFor(banner, 15*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := c.Restart(3); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitFor(`document.getElementById('conn').hidden && document.querySelector('tr[data-member="agent-3"].alive') !== null`, 20*time.Second); err != nil {
			t.Fatal(err)
		}
		// The browser logs the fetches to the agent that failed at the
		// network level (reset, refused, not connected) while it was down;
		// those are expected here, and nothing else is.
		for _, p := range tab.Problems() {
			if !strings.Contains(p, "Failed to load resource: net::ERR_") || !strings.Contains(p, "http://"+a3.HTTP+"/") {
				t.Errorf("page problem: %s", p)
			}
		}
	})
}
