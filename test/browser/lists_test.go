package browser

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/test/browser/harness"
)

// The list pages answer questions (issue 27): what pagesCluster registered
// shows as columns, on agent 3, which learned it all by gossip.
func testListColumns(t *testing.T, a3 *harness.Agent) {
	tab := newTab(t, 1280, 900)
	for _, p := range []struct {
		path, row string
		want      []string
	}{
		// Shared: broker-a (DefaultCluster) and broker-b (ClusterB), 4+4 queues each, RW-.
		{"/ui/topics", `#topics tr[data-topic="Shared"]`, []string{"Shared", "ClusterB, DefaultCluster", "broker-a, broker-b", "8 / 8", "RW-"}},
		{"/ui/services", `#services tr[data-service="` + iface + `"]`, []string{iface, "1\t1", "greeter-app, shop", "1.0.0"}},
	} {
		if err := tab.Open(a3.URL(p.path)); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, `(() => { const r = document.querySelector(%q); const t = r ? r.innerText : ''; return r !== null`, p.row)
		for _, w := range p.want {
			fmt.Fprintf(&b, " && t.includes(%q)", w)
		}
		b.WriteString("; })()")
		if err := tab.WaitFor(b.String(), 15*time.Second); err != nil {
			row, _ := harness.Eval[string](tab, fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || 'no row'`, p.row))
			t.Errorf("%s: row %s is %q, want it to hold %q", p.path, p.row, row, p.want)
		}
	}
}

// The Overview's rule count is the number of rules the Rules page lists
// (the app registration's /dubbo/mapping and metadata znodes included),
// and each Lamport time shows as the API gives it, digit for digit.
func testTruthfulRules(t *testing.T, a3 *harness.Agent) {
	var rules struct {
		Rules []struct {
			Time string `json:"time"`
			Kind string `json:"kind"`
		} `json:"rules"`
	}
	if err := a3.Get("/v1/rules", &rules); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range rules.Rules {
		kinds[r.Kind]++
	}
	if kinds["znode"] == 0 || kinds["url"] != 2 {
		t.Errorf("rules by kind %v: want the two URL rules and the application's znodes", kinds)
	}
	tab := newTab(t, 1280, 900)
	if err := tab.Open(a3.URL("/ui/")); err != nil {
		t.Fatal(err)
	}
	cardValue := `(() => { const c = [...document.querySelectorAll('.card')].find((c) => c.querySelector('.card-title').innerText.trim().toLowerCase() === 'rules');
		return c ? c.querySelector('.card-value').innerText : ''; })()`
	want := fmt.Sprint(len(rules.Rules))
	if err := tab.WaitFor(cardValue+` === `+fmt.Sprintf("%q", want), 15*time.Second); err != nil {
		got, _ := harness.Eval[string](tab, cardValue)
		t.Errorf("the Overview counts %q rules, /v1/rules lists %s", got, want)
	}
	if err := tab.Open(a3.URL("/ui/rules")); err != nil {
		t.Fatal(err)
	}
	if err := tab.WaitFor(`document.querySelectorAll('#rules > tbody > tr').length === `+want, 15*time.Second); err != nil {
		n, _ := harness.Eval[int](tab, `document.querySelectorAll('#rules > tbody > tr').length`)
		t.Errorf("the Rules page lists %d rules, the Overview counts %s", n, want)
	}
	// The rows are drawn: every time is looked for at once, with the same
	// wait as the rest: a second for each, a round trip to chromium per
	// time, is too little on a busy machine.
	var times []string
	for _, r := range rules.Rules {
		times = append(times, r.Time)
	}
	if err := tab.WaitFor(containsAll(times), 15*time.Second); err != nil {
		text, _ := tab.Text()
		for _, tm := range times {
			if !strings.Contains(text, tm) {
				t.Errorf("the Rules page does not show the Lamport time %s as the API gives it", tm)
			}
		}
		t.Errorf("the Rules page lacks Lamport times: %v", err)
	}
}

// At 390 px every page fits: no element of the view is past the right edge,
// nothing is hidden in a box that scrolls sideways, and no column is
// squeezed to a sliver a letter wide.
func testNarrowFits(t *testing.T, a3 *harness.Agent) {
	tab := newTab(t, 390, 844)
	for _, p := range []struct{ path, want string }{
		{"/ui/", "alive"},
		{"/ui/members", "agent-2"},
		{"/ui/topics", "TopicFromA"},
		{"/ui/topics/Shared", "broker-b"},
		{"/ui/clusters", "ClusterB"},
		{"/ui/services", iface},
		{"/ui/services/" + iface, "greeter-app"},
		{"/ui/apps", "greeter-app"},
		{"/ui/apps/greeter-app", "192.0.2.30"},
		{"/ui/rules", "configurators"},
		{"/ui/agent", "zookeeper_delete_hold"},
	} {
		if err := tab.Open(a3.URL(p.path)); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitFor(containsAll([]string{p.want}), 15*time.Second); err != nil {
			t.Fatal(err)
		}
		over, err := harness.Eval[string](tab, `(() => {
			const w = document.documentElement.clientWidth;
			const out = [];
			for (const e of document.querySelectorAll('#view *')) {
				const r = e.getBoundingClientRect();
				if (r.width > 0 && r.right > w + 0.5) out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' "' + (e.innerText || e.textContent || '').slice(0, 40) + '" ends at ' + Math.round(r.right));
				if ((e.tagName === 'TD' || e.tagName === 'TH') && r.width > 0 && r.width < 48 && (e.innerText || '').trim().length > 8) out.push(e.tagName.toLowerCase() + ' "' + e.innerText.slice(0, 20) + '" squeezed to ' + Math.round(r.width) + ' px');
				if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible' && e.clientWidth > 0) out.push(e.tagName.toLowerCase() + '.' + e.className + ' scrolls sideways');
			}
			if (document.documentElement.scrollWidth > w) out.push('the page is ' + document.documentElement.scrollWidth + ' px wide');
			return out.slice(0, 5).join('; ');
		})()`)
		if err != nil {
			t.Fatal(err)
		}
		if over != "" {
			t.Errorf("%s at 390 px: %s", p.path, over)
		}
	}
}

// A dead member shows how long it has been dead, not a round trip or an
// uptime. Kills agent 2: run it last.
func testDeadMemberSaysSince(t *testing.T, c *harness.Cluster) {
	c.Kill(2)
	tab := newTab(t, 1280, 900)
	if err := tab.Open(c.Agents[2].URL("/ui/members")); err != nil {
		t.Fatal(err)
	}
	row := `(document.querySelector('#members tr[data-member="agent-2"]') || {}).innerText || ''`
	if err := tab.WaitFor(`/dead \d+s/.test(`+row+`)`, 30*time.Second); err != nil {
		got, _ := harness.Eval[string](tab, row)
		t.Fatalf("agent-2's row after its kill: %q, want \"dead Ns\"", got)
	}
	got, _ := harness.Eval[string](tab, row)
	if strings.Contains(got, " ms") || strings.Contains(got, "up ") {
		t.Errorf("a dead member's row shows a round trip or uptime: %q", got)
	}
}
