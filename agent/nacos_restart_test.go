package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/internal/testutil"
)

// nacosHTTP calls the Nacos door's 1.x HTTP API.
func nacosHTTP(t *testing.T, a *agent.Agent, method, path string, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+a.Addr("nacos")+path+"?"+form.Encode(), nil)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var beatInst = url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.23"}, "port": {"8080"}}

// The door contract: a door's Close withdraws nothing. The agent's
// shutdown (a restart, a crash) leaves the Nacos door's instances in its
// table, as the ZooKeeper and RocketMQ doors leave theirs; before, Close
// withdrew them all and gossiped the withdrawal.
func TestNacosShutdownWithdrawsNothing(t *testing.T) {
	c := agenttest.Start(t, 1)
	a := c.Agent(0)
	_, u := registerOverNacos(t, a)
	if code, body := nacosHTTP(t, a, "POST", "/nacos/v1/ns/instance", beatInst); code != 200 {
		t.Fatalf("register over HTTP: %d %s", code, body)
	}
	c.Crash(0)
	if !servesURL(a, u) || len(a.Table().URLs("orders", "nacos")) != 1 {
		t.Fatalf("the agent's shutdown withdrew the Nacos door's instances: %q, %q",
			a.Table().URLs(nacosHeldIface, "providers"), a.Table().URLs("orders", "nacos"))
	}
}

// An agent restarted with its data dir keeps the Nacos door's instances.
// A gRPC connection's instances and an instance registered over the 1.x
// HTTP API are in the data dir when their answers arrive, and are served
// again as the agent restarts; a client that reconnects and re-registers
// within the grace keeps its instance, and what it did not re-register is
// withdrawn once the grace has passed; the HTTP instance is held by its
// beats again. Before, the door saved no lease: nothing came back.
func TestNacosInstancesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	const grace = time.Second
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir), func(cfg *agent.Config) { cfg.NacosGrace = agent.Duration(grace) })
	a := c.Agent(0)
	nc := nacostest.Dial(t, a.Addr("nacos-grpc"))
	kept, dropped := nacosHeldInst(), nacosHeldInst()
	dropped.IP = "10.0.0.10"
	for _, in := range []nacoswire.Instance{kept, dropped} {
		if err := nc.Register(nacosHeldService, in); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := nacosHTTP(t, a, "POST", "/nacos/v1/ns/instance", beatInst); code != 200 {
		t.Fatalf("register over HTTP: %d %s", code, body)
	}
	saved, err := agent.SavedLeases(filepath.Join(dir, "agent-0"))
	if err != nil {
		t.Fatal(err)
	}
	var grpc, beat int
	for id, recs := range saved {
		switch {
		case id == "grpc:"+nc.ConnID:
			grpc = len(recs)
		case strings.HasPrefix(id, "beat:"):
			beat = len(recs)
		}
	}
	if grpc != 2 || beat != 1 {
		t.Fatalf("saved when the answers came: %d records of the gRPC connection (want 2), %d of the HTTP instance (want 1); leases %v", grpc, beat, saved)
	}
	urls := a.Table().URLs(nacosHeldIface, "providers")
	var keptURL, droppedURL string
	for _, u := range urls {
		switch {
		case strings.Contains(u, "//"+kept.IP+":"):
			keptURL = u
		case strings.Contains(u, "//"+dropped.IP+":"):
			droppedURL = u
		}
	}
	if keptURL == "" || droppedURL == "" {
		t.Fatalf("served %q", urls)
	}

	a = c.Restart(0)
	if !servesURL(a, keptURL) || !servesURL(a, droppedURL) || len(a.Table().URLs("orders", "nacos")) != 1 {
		t.Fatalf("after the restart the agent serves %q and %q: the Nacos instances were not restored",
			a.Table().URLs(nacosHeldIface, "providers"), a.Table().URLs("orders", "nacos"))
	}
	if code, body := nacosHTTP(t, a, "PUT", "/nacos/v1/ns/instance/beat", beatInst); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("a beat after the restart: %d %s, want code 10200 (the instance held by its beats again)", code, body)
	}
	back := nacostest.Dial(t, a.Addr("nacos-grpc")) // the client reconnects and redoes its registration
	if err := back.Register(nacosHeldService, kept); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, func() error {
		if servesURL(a, droppedURL) {
			return fmt.Errorf("%s, not re-registered, still served", droppedURL)
		}
		return nil
	})
	if !servesURL(a, keptURL) || len(a.Table().URLs("orders", "nacos")) != 1 {
		t.Fatalf("past the grace the agent serves %q and %q: the re-registered instance or the beaten one went",
			a.Table().URLs(nacosHeldIface, "providers"), a.Table().URLs("orders", "nacos"))
	}
}

// A Nacos registration or withdrawal the data dir cannot save is refused
// through the door (a Nacos error response naming the data dir, HTTP 503
// for the 1.x API) and changes nothing; once the disk takes writes again
// the withdrawal goes through.
func TestNacosChangeThatCannotBeSavedIsRefused(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	nc, u := registerOverNacos(t, a)
	heal := agent.BreakLeaseLog(a)
	other := nacosHeldInst()
	other.IP = "10.0.0.11"
	if err := nc.Register(nacosHeldService, other); err == nil || !strings.Contains(err.Error(), "data dir") {
		t.Fatalf("unsavable registration answered %v, want an error naming the data dir", err)
	}
	if err := nc.Deregister(nacosHeldService, nacosHeldInst()); err == nil {
		t.Fatal("unsavable withdrawal answered success")
	}
	if code, body := nacosHTTP(t, a, "POST", "/nacos/v1/ns/instance", beatInst); code != 503 || !strings.Contains(body, "data dir") {
		t.Fatalf("unsavable HTTP registration: %d %s, want 503 naming the data dir", code, body)
	}
	if got := a.Table().URLs(nacosHeldIface, "providers"); len(got) != 1 || got[0] != u || len(a.Table().URLs("orders", "nacos")) != 0 {
		t.Fatalf("after refused changes the agent serves %q and %q, want only %s", got, a.Table().URLs("orders", "nacos"), u)
	}
	heal()
	if err := nc.Deregister(nacosHeldService, nacosHeldInst()); err != nil {
		t.Fatalf("withdrawal once the disk takes writes: %v", err)
	}
	if servesURL(a, u) {
		t.Fatalf("%s still served after its withdrawal", u)
	}
	saved, err := agent.SavedLeases(filepath.Join(dir, "agent-0"))
	if err != nil || len(saved) != 0 {
		t.Fatalf("a restart would restore %v (%v), want nothing", saved, err)
	}
}

// A restored registration no door claims (its door is off after the
// restart) is withdrawn, but not a record another door's restored lease
// still holds: a URL registered over Nacos and over HTTP stays served when
// the agent comes back with --nacos off. Before, the agent withdrew every
// record of the unclaimed lease.
func TestUnclaimedNacosLeaseLeavesWhatHTTPHolds(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	_, u := registerOverNacos(t, a)
	if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u, 0); err != nil {
		t.Fatal(err)
	}
	other := nacosHeldInst()
	other.IP = "10.0.0.13"
	nc := nacostest.Dial(t, a.Addr("nacos-grpc"))
	if err := nc.Register(nacosHeldService, other); err != nil {
		t.Fatal(err)
	}
	if got := a.Table().URLs(nacosHeldIface, "providers"); len(got) != 2 {
		t.Fatalf("before the restart: %q", got)
	}
	a = c.RestartWith(0, func(cfg *agent.Config) { cfg.NacosAddr = "off" })
	if got := a.Table().URLs(nacosHeldIface, "providers"); len(got) != 1 || got[0] != u {
		t.Fatalf("restarted with the Nacos door off, the agent serves %q; want only %s, which HTTP holds", got, u)
	}
}
