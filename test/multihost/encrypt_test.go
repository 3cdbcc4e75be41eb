package multihost

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/internal/netns"
)

// TestEncryptionKeepsOutAndRotates runs an encrypted cluster on hosts 1-5
// beside two agents that find it over mDNS but lack the key (host 6 has
// another key, host 7 none): they must stay alone and learn no route. Then
// the key is rotated with `namecast keys` run inside the hosts, and after
// every step each member must still see all five alive and every member's
// fresh route must reach all of them: a member left on a key the others
// dropped would fail both. Profile fast, so a member the rotation cut off
// would be declared dead within seconds instead of lan's ~5 s or more.
func TestEncryptionKeepsOutAndRotates(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 7)
	bin := netns.BuildBinary(t, namecastPkg)
	oldKey, newKey, otherKey := keygen(t, lab.Host(0), bin), keygen(t, lab.Host(0), bin), keygen(t, lab.Host(0), bin)

	as := startAgents(t, bin, lab.Hosts(), func(i int) []string {
		flags := []string{"--discover", "prod", "--profile", "fast"}
		switch i {
		case 5:
			return append(flags, "--encrypt", otherKey)
		case 6:
			return flags
		}
		return append(flags, "--encrypt", oldKey)
	})
	cluster, outsiders := as[:5], as[5:]
	waitAlive(t, 30*time.Second, cluster, names(cluster))

	for _, a := range outsiders {
		if err := a.registerBroker(10911, "Outsider-"+a.node); err != nil {
			t.Fatal(err)
		}
	}
	registerAll(t, cluster, "start")
	waitTopics(t, 10*time.Second, cluster, topicsOf(cluster, "start")...)
	for _, a := range outsiders {
		// Found the cluster, tried, failed: the refusal is not for lack
		// of trying.
		if err := a.proc.WaitLog("could not join peers found over mDNS", 30*time.Second); err != nil {
			t.Fatal(err)
		}
		waitAlive(t, time.Second, []*agent{a}, []string{a.node})
		waitTopics(t, time.Second, []*agent{a}, "Outsider-"+a.node)
	}

	for i, step := range []struct{ op, key string }{{"install", newKey}, {"use", newKey}, {"remove", oldKey}} {
		out := keysCmd(t, cluster[i].host, bin, step.op, step.key)
		fp, err := client.KeyFingerprint(step.key)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%s %s: 5 of 5 members", step.op, fp); !strings.Contains(out, want) {
			t.Fatalf("keys %s printed %q, want %q", step.op, out, want)
		}
		waitAlive(t, 5*time.Second, cluster, names(cluster))
		registerAll(t, cluster, step.op)
		waitTopics(t, 10*time.Second, cluster, topicsOf(cluster, step.op)...)
	}
	var list struct {
		Keys    map[string]int `json:"keys"`
		Primary map[string]int `json:"primary"`
	}
	if err := json.Unmarshal([]byte(keysCmd(t, cluster[3].host, bin, "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	// The list names keys by fingerprint, never by the key itself.
	fp, err := client.KeyFingerprint(newKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Keys) != 1 || list.Keys[fp] != 5 || list.Primary[fp] != 5 {
		t.Errorf("keys list after the rotation: %+v, want only the new key (%s), held and used by all 5", list, fp)
	}

	// The retired key no longer opens the cluster; the new one does.
	for _, a := range outsiders {
		a.proc.Kill()
	}
	outsiders[0].restart("--discover", "prod", "--profile", "fast", "--encrypt", oldKey)
	outsiders[1].restart("--discover", "prod", "--profile", "fast", "--encrypt", newKey)
	if err := outsiders[0].proc.WaitLog("could not join peers found over mDNS", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	joined := append(cluster[:5:5], outsiders[1])
	waitAlive(t, 30*time.Second, joined, names(joined))
	waitAlive(t, time.Second, outsiders[:1], []string{outsiders[0].node})
	waitTopics(t, time.Second, outsiders[:1])
}

func keygen(t *testing.T, h *netns.Host, bin string) string {
	t.Helper()
	out, err := h.Run(t.Context(), bin, "keygen")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// keysCmd runs `namecast keys op args...` inside h against its agent, as
// an operator on that host would, and fails t unless it exits 0.
func keysCmd(t *testing.T, h *netns.Host, bin, op string, args ...string) string {
	t.Helper()
	out, err := h.Run(t.Context(), bin, append([]string{"keys", op, "--http", httpAddr}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
