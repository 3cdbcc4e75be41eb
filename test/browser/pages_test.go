package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/test/browser/harness"
)

const (
	token   = "tok-Sup3rSecret-9f2c"     // agent-3's --http-token
	key     = "c2VjcmV0LWtleS0xMjM0NQ==" // every agent's --encrypt key
	iface   = "com.example.Greeter"
	hostile = "<img src=x onerror=alert(1)>"
)

// pagesCluster is three agents; brokers, services and rules are
// registered through agents 1 and 2 only, so agent 3 shows what it learned
// by gossip.
func pagesCluster(t *testing.T) *harness.Cluster {
	c := startCluster(t, 3, func(i int) []string {
		args := []string{"--encrypt", key, "--tag", "zone=z" + fmt.Sprint(i)}
		if i == 1 {
			args = append(args, "--tag", "note="+hostile)
		}
		if i == 3 {
			args = append(args, "--http-token", token)
		}
		return args
	})
	a1, a2 := c.Agents[0], c.Agents[1]
	for _, step := range []struct {
		a    *harness.Agent
		path string
		body map[string]any
	}{
		{a1, "/v1/brokers", harness.Broker("DefaultCluster", "broker-a", 0, "192.0.2.1:10911", "TopicFromA", "Shared")},
		{a2, "/v1/brokers", harness.Broker("DefaultCluster", "broker-a", 1, "192.0.2.11:10911")},
		{a2, "/v1/brokers", harness.Broker("ClusterB", "broker-b", 0, "192.0.2.2:10911", "TopicFromB", "Shared")},
		{a1, "/v1/urls", harness.URL("dubbo://192.0.2.10:20880/" + iface + "?application=greeter-app&version=1.0.0&methods=hello,bye&token=s3cret-provider")},
		{a2, "/v1/urls", harness.URL("consumer://192.0.2.20/" + iface + "?category=consumers&application=shop&side=consumer")},
		{a2, "/v1/urls", harness.URL("override://0.0.0.0/" + iface + "?category=configurators&dynamic=false&timeout=3000")},
		{a1, "/v1/urls", harness.URL("route://0.0.0.0/" + iface + "?category=routers&dynamic=false&rule=host%3D192.0.2.9")},
		{a1, "/v1/urls", harness.URL("dubbo://192.0.2.66:20880/com.example.Hostile?x=" + hostile + "&y=<script>alert(2)</script>&application=evil")},
		{a1, "/v1/apps/greeter-app/instances", map[string]any{"address": "192.0.2.30", "port": 20880, "interfaces": []string{iface},
			"metadata": map[string]string{"note": hostile}}},
	} {
		if err := step.a.Put(step.path, step.body); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestPages(t *testing.T) {
	needBrowser(t)
	c := pagesCluster(t)
	a3 := c.Agents[2]

	t.Run("DeepLinksOnAgent3", func(t *testing.T) {
		tab := newTab(t, 1280, 900)
		for _, p := range []struct {
			path string
			want []string
		}{
			{"/ui/", []string{"agent-3", "3 alive", "2 broker groups", "16\nin this agent's copy"}},
			{"/ui/members", []string{"agent-1", "agent-2", "agent-3", "zone=z1", "note=" + hostile}},
			{"/ui/topics", []string{"TopicFromA", "TopicFromB", "Shared"}},
			{"/ui/topics/Shared", []string{"broker-a", "broker-b", "agent-1", "agent-2", "master 192.0.2.1:10911", "slave 1 192.0.2.11:10911"}},
			{"/ui/clusters", []string{"DefaultCluster", "ClusterB", "192.0.2.1:10911 via agent-1 · registered ", "192.0.2.11:10911 via agent-2 · registered ", "192.0.2.2:10911 via agent-2", "ago · no expiry"}},
			{"/ui/services", []string{iface}},
			{"/ui/services/" + iface, []string{"192.0.2.10:20880", "greeter-app", "hello, bye", "shop", "dynamic=false", "3000", "<redacted>", "applications 1"}},
			{"/ui/apps", []string{"greeter-app", iface}},
			{"/ui/apps/greeter-app", []string{"192.0.2.30:20880", "agent-1", "dubbo.metadata.revision", "exports " + iface}},
			{"/ui/rules", []string{"agent-1\nincarnation ", "agent-2\nincarnation ", "configurators", "routers", "host=192.0.2.9"}},
			{"/ui/agent", []string{"agent-3", "http_token", "<redacted>", "in this agent's table", "per second, applied from gossip", "zookeeper_delete_hold\t500ms"}},
		} {
			if err := tab.Open(a3.URL(p.path)); err != nil {
				t.Fatal(err)
			}
			if err := tab.WaitFor(containsAll(p.want), 15*time.Second); err != nil {
				t.Errorf("%s: %v", p.path, err)
				continue
			}
			html, err := harness.Eval[string](tab, `document.documentElement.outerHTML`)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{token, key, "s3cret-provider"} {
				if strings.Contains(html, secret) {
					t.Errorf("%s renders the secret %q", p.path, secret)
				}
			}
		}
	})

	t.Run("RegisteredTextIsText", func(t *testing.T) {
		tab := newTab(t, 1280, 900)
		for _, path := range []string{"/ui/services/com.example.Hostile", "/ui/members", "/ui/apps/greeter-app"} {
			if err := tab.Open(a3.URL(path)); err != nil {
				t.Fatal(err)
			}
			if err := tab.WaitFor(containsAll([]string{hostile}), 15*time.Second); err != nil {
				t.Fatal(err)
			}
			// No image, no script but the UI's own, no handler attribute:
			// nothing the registered text carried became an element.
			got, err := harness.Eval[string](tab, `[document.images.length, document.scripts.length,
				document.querySelectorAll('[onerror], #view script').length].join(',')`)
			if err != nil {
				t.Fatal(err)
			}
			if got != "0,1,0" {
				t.Errorf("%s: images, scripts, injected = %s, want 0,1,0", path, got)
			}
		}
		if path := "/ui/services/com.example.Hostile"; true {
			if err := tab.Open(a3.URL(path)); err != nil {
				t.Fatal(err)
			}
			if err := tab.WaitFor(containsAll([]string{"<script>alert(2)</script>"}), 15*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		if d := tab.Dialogs(); len(d) > 0 {
			t.Errorf("the page opened dialogs: %v", d)
		}
	})

	t.Run("TopicAppearsLive", func(t *testing.T) {
		tab := newTab(t, 1280, 900)
		if err := tab.Open(a3.URL("/ui/topics")); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitFor(containsAll([]string{"TopicFromA"}), 15*time.Second); err != nil {
			t.Fatal(err)
		}
		// A mark on the window: it survives only if the page is not reloaded.
		if _, err := harness.Eval[bool](tab, `window.notReloaded = true`); err != nil {
			t.Fatal(err)
		}
		topic := fmt.Sprintf("Live%d", time.Now().UnixNano())
		if err := c.Agents[0].Put("/v1/brokers", harness.Broker("DefaultCluster", "broker-live", 0, "192.0.2.3:10911", topic)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		expr := fmt.Sprintf(`window.notReloaded && [...document.querySelectorAll('#topics a')].some((a) => a.textContent === %q)`, topic)
		if err := tab.WaitFor(expr, 2*time.Second); err != nil {
			t.Fatalf("topic registered on agent-1 not shown on agent-3's open page within 2 s: %v", err)
		}
		t.Logf("topic shown %v after its registration returned", time.Since(start).Round(time.Millisecond))
	})

	t.Run("ListColumns", func(t *testing.T) { testListColumns(t, a3) })
	t.Run("TruthfulRules", func(t *testing.T) { testTruthfulRules(t, a3) })
	t.Run("Narrow390Fits", func(t *testing.T) { testNarrowFits(t, a3) })

	t.Run("Narrow390", func(t *testing.T) {
		tab := newTab(t, 390, 844)
		dir := artifactDir(t)
		for _, p := range []struct{ path, want, file string }{
			{"/ui/", "3 alive", "narrow-overview.png"},
			{"/ui/members", "agent-2", "narrow-members.png"},
			{"/ui/topics/Shared", "broker-b", "narrow-topic.png"},
			{"/ui/services/" + iface, "greeter-app", "narrow-service.png"},
			{"/ui/apps/greeter-app", "192.0.2.30:20880", "narrow-app.png"},
		} {
			if err := tab.Open(a3.URL(p.path)); err != nil {
				t.Fatal(err)
			}
			if err := tab.WaitFor(containsAll([]string{p.want}), 15*time.Second); err != nil {
				t.Fatal(err)
			}
			// Usable: the page does not scroll sideways and every navigation
			// link is on screen (Narrow390Fits checks every element).
			got, err := harness.Eval[string](tab, `[document.documentElement.scrollWidth, window.innerWidth,
				[...document.querySelectorAll('#nav a')].filter((a) => { const r = a.getBoundingClientRect(); return r.right <= window.innerWidth && r.width > 0; }).length,
				document.querySelectorAll('#nav a').length].join(',')`)
			if err != nil {
				t.Fatal(err)
			}
			var sw, w, links, all int
			fmt.Sscanf(got, "%d,%d,%d,%d", &sw, &w, &links, &all)
			if sw > w || links != all || all < 8 {
				t.Errorf("%s at 390 px: page width %d for a %d px window, %d of %d nav links on screen", p.path, sw, w, links, all)
			}
			png, err := tab.FullScreenshot()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, p.file), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("screenshots at 390 px in %s", dir)
	})

	t.Run("DeadMemberSaysSince", func(t *testing.T) { testDeadMemberSaysSince(t, c) })
}

// containsAll is a JavaScript predicate: the view's text holds every string.
func containsAll(want []string) string {
	var b strings.Builder
	b.WriteString(`(() => { const t = (document.getElementById('view') || {}).innerText || ''; return `)
	for i, w := range want {
		if i > 0 {
			b.WriteString(" && ")
		}
		fmt.Fprintf(&b, "t.includes(%q)", w)
	}
	b.WriteString("; })()")
	return b.String()
}
