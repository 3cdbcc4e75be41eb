package agent_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
)

// The holder-set rule across the Nacos door and the others (issue 23, as
// the Nacos door of issue 28 must keep it): a Dubbo URL registered over
// Nacos and also over HTTP or ZooKeeper stays while either holds it.

const nacosHeldIface = "com.example.NacosHeld"

func nacosHeldInst() nacoswire.Instance {
	return nacoswire.Instance{IP: "10.0.0.9", Port: 20880, Weight: 1, Healthy: true, Enabled: true,
		Metadata: map[string]string{"interface": nacosHeldIface, "version": "1.0.0", "side": "provider", "application": "held"}}
}

const nacosHeldService = "providers:" + nacosHeldIface + ":1.0.0:"

func startNacosHolders(t *testing.T, grace time.Duration) *agent.Agent {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.NacosGrace = agent.Duration(grace) })
	return c.Agent(0)
}

// registerOverNacos registers the instance on a new connection and
// returns it with the URL the agent serves for it.
func registerOverNacos(t *testing.T, a *agent.Agent) (*nacostest.Client, string) {
	t.Helper()
	nc := nacostest.Dial(t, a.Addr("nacos-grpc"))
	if err := nc.Register(nacosHeldService, nacosHeldInst()); err != nil {
		t.Fatal(err)
	}
	urls := a.Table().URLs(nacosHeldIface, "providers")
	if len(urls) != 1 {
		t.Fatalf("after the Nacos registration %s serves %q, want one URL", nacosHeldIface, urls)
	}
	return nc, urls[0]
}

func servesURL(a *agent.Agent, u string) bool {
	return slices.Contains(a.Table().URLs(nacosHeldIface, "providers"), u)
}

// heldBy reports whether a lease of door covers the URL's record.
func heldBy(a *agent.Agent, door string) bool {
	ls, _ := a.Host().(interface{ Leases() []lease.Lease })
	for _, l := range ls.Leases() {
		if l.Door == door {
			return true
		}
	}
	return false
}

// A URL registered over Nacos and over HTTP with a TTL: the Nacos
// connection's end (past its grace) leaves it served until the TTL runs
// out. Before, the Nacos door withdrew it when its own last holder let
// go.
func TestNacosURLHeldOverHTTPOutlivesItsConnection(t *testing.T) {
	a := startNacosHolders(t, 200*time.Millisecond)
	nc, u := registerOverNacos(t, a)
	const ttl = 3 * time.Second
	registered := time.Now()
	if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u, ttl); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	testutil.Eventually(t, 20*time.Second, func() error {
		if servesURL(a, u) {
			return fmt.Errorf("%s still served", u)
		}
		return nil
	})
	if gone := time.Since(registered); gone < ttl {
		t.Fatalf("the URL went %v after its HTTP registration with TTL %v: the Nacos connection's end (grace 200ms) withdrew what HTTP held", gone, ttl)
	}
}

// The reverse: a URL registered over HTTP with a TTL and over Nacos stays
// past the TTL while the Nacos connection holds it, and goes once the
// connection has gone for its grace. Before, the HTTP door's expiry took
// it: the Nacos door held it without a lease the host could see.
func TestNacosURLOutlivesItsHTTPTTL(t *testing.T) {
	a := startNacosHolders(t, 200*time.Millisecond)
	nc, u := registerOverNacos(t, a)
	if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u, time.Second); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if heldBy(a, "http") {
			return fmt.Errorf("the HTTP registration has not expired yet")
		}
		return nil
	})
	if !servesURL(a, u) {
		t.Fatalf("the HTTP registration's expiry withdrew %s, which a live Nacos connection holds", u)
	}
	nc.Kill()
	testutil.Eventually(t, 20*time.Second, func() error {
		if servesURL(a, u) {
			return fmt.Errorf("%s still served after its last holder, the Nacos connection, went", u)
		}
		return nil
	})
}

// A URL created over ZooKeeper as an ephemeral znode and registered over
// Nacos: the session's end leaves it while the Nacos connection holds it;
// the connection's end (past its grace) takes it.
func TestNacosURLOutlivesAZooKeeperSession(t *testing.T) {
	a := startNacosHolders(t, 200*time.Millisecond)
	nc, u := registerOverNacos(t, a) // to learn the URL; the znode comes first
	if err := nc.Deregister(nacosHeldService, nacosHeldInst()); err != nil || servesURL(a, u) {
		t.Fatalf("deregister: %v, still served: %v", err, servesURL(a, u))
	}
	zk := dialZK(t, a.Addr("zookeeper"))
	acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
	for _, p := range []string{"/dubbo", "/dubbo/" + nacosHeldIface, "/dubbo/" + nacosHeldIface + "/providers"} {
		if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: acl}); code != 0 && code != zkwire.ErrNodeExists {
			t.Fatalf("create %s: %d", p, code)
		}
	}
	leaf := "/dubbo/" + nacosHeldIface + "/providers/" + url.QueryEscape(u)
	if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, ACL: acl, Flags: zkwire.FlagEphemeral}); code != 0 {
		t.Fatalf("create %s: %d", leaf, code)
	}
	if err := nc.Register(nacosHeldService, nacosHeldInst()); err != nil {
		t.Fatal(err)
	}
	zk.call(zkwire.OpCloseSession, noBody{}) // answered once the session has ended
	if !servesURL(a, u) {
		t.Fatalf("the ZooKeeper session's end withdrew %s, which a live Nacos connection holds", u)
	}
	nc.Close()
	testutil.Eventually(t, 20*time.Second, func() error {
		if servesURL(a, u) {
			return fmt.Errorf("%s still served after its last holder, the Nacos connection, went", u)
		}
		return nil
	})
}
