package agent_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
)

// A record is withdrawn from an agent when its last holder lets go: a URL
// created over ZooKeeper and then registered over HTTP with a TTL is held
// by the session and by the HTTP lease, so the session's end leaves it
// served, until the TTL runs out (issue 23, item 4: endSession deleted it
// without asking the other holders).
func TestURLHeldOverHTTPOutlivesItsZooKeeperSession(t *testing.T) {
	c := agenttest.Start(t, 1)
	a := c.Agent(0)
	const iface = "com.example.Held"
	const u = "dubbo://10.0.0.7:20880/" + iface + "?anyhost=true&application=held&interface=" + iface + "&side=provider"
	zk := dialZK(t, a.ZooKeeperAddr())
	acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
	for _, p := range []string{"/dubbo", "/dubbo/" + iface, "/dubbo/" + iface + "/providers"} {
		if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: acl}); code != 0 && code != zkwire.ErrNodeExists {
			t.Fatalf("create %s: %d", p, code)
		}
	}
	leaf := "/dubbo/" + iface + "/providers/" + url.QueryEscape(u)
	if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, ACL: acl, Flags: zkwire.FlagEphemeral}); code != 0 {
		t.Fatalf("create %s: %d", leaf, code)
	}
	if _, err := a.HTTP().RegisterURL(u, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	served := func() bool {
		return slices.ContainsFunc(a.Table().URLs(iface, "providers"), func(s string) bool { return s == u })
	}
	if !served() {
		t.Fatalf("%s is not served while both hold it: %q", iface, a.Table().URLs(iface, "providers"))
	}
	zk.call(zkwire.OpCloseSession, noBody{}) // answered once the session has ended
	if !served() {
		t.Fatalf("the ZooKeeper session's end withdrew the URL its HTTP registration still holds: %s serves %q", iface, a.Table().URLs(iface, "providers"))
	}
	// The HTTP registration is now its last holder: it goes with its TTL.
	testutil.Eventually(t, 15*time.Second, func() error {
		if served() {
			return fmt.Errorf("%s still served after its last holder's TTL", u)
		}
		return nil
	})
}

// noBody is the body of a request that has none (closeSession).
type noBody struct{}

func (noBody) Decode(*zkwire.Decoder) {}
func (noBody) Encode(*zkwire.Encoder) {}
