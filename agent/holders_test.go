package agent_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
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
	zk := dialZK(t, a.Addr("zookeeper"))
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
	if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u, 3*time.Second); err != nil {
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

// A record two doors hold comes back from a kill -9 as it was last
// acknowledged, whichever door changed it last: a URL a ZooKeeper session
// created (with data) and then registered over HTTP with a TTL (which
// replaces the record) is saved under both leases as the HTTP answer
// left it. Before, only the HTTP lease was re-saved; the session's lease
// kept the ZooKeeper record, and a restart restored whichever lease it
// read last (by order of first write in the log, at random in a
// snapshot). The crash is simulated as in lease_cover_test.go: the data
// dir as it was at the answer is put back after Crash (which saves once
// more on its way out).
func TestRecordTwoDoorsHoldSurvivesACrashAsLastAcknowledged(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	data := filepath.Join(dir, "agent-0")
	const iface = "com.example.Shared"
	const u = "dubbo://10.0.0.8:20880/" + iface + "?anyhost=true&application=shared&interface=" + iface + "&side=provider"
	zk := dialZK(t, a.Addr("zookeeper"))
	acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
	for _, p := range []string{"/dubbo", "/dubbo/" + iface, "/dubbo/" + iface + "/providers"} {
		if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: acl}); code != 0 && code != zkwire.ErrNodeExists {
			t.Fatalf("create %s: %d", p, code)
		}
	}
	leaf := "/dubbo/" + iface + "/providers/" + url.QueryEscape(u)
	if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, Data: []byte("from-zookeeper"), ACL: acl, Flags: zkwire.FlagEphemeral}); code != 0 {
		t.Fatalf("create %s: %d", leaf, code)
	}
	rec, err := agent.Door[*httpapi.Server](a).RegisterURL(u, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	key := routes.URLKey(rec.Interface, rec.Category, rec.URL)
	acked, ok := a.Table().LocalRecord(key)
	if !ok {
		t.Fatalf("%s not held after both registrations", key)
	}
	want, _ := json.Marshal(acked)
	saved, err := agent.SavedLeases(data)
	if err != nil {
		t.Fatal(err)
	}
	holders := 0
	for id, recs := range saved {
		for _, r := range recs {
			if r.Key() != key {
				continue
			}
			holders++
			if got, _ := json.Marshal(r); string(got) != string(want) {
				t.Errorf("lease %s saved %s as %s; a restart may restore it instead of the acknowledged %s", id, key, got, want)
			}
		}
	}
	if holders != 2 {
		t.Fatalf("%d saved leases hold %s, want the session's and the HTTP registration's", holders, key)
	}
	for i := range 2 { // kill -9; then again, after the restart's snapshot
		atAnswer := readFiles(t, data, "leases.json", "leases.log")
		c.Crash(0)
		writeFiles(t, data, atAnswer)
		a = c.Restart(0)
		got, ok := a.Table().LocalRecord(key)
		if b, _ := json.Marshal(got); !ok || string(b) != string(want) {
			t.Fatalf("restart %d restored %s as %s, want %s", i+1, key, b, want)
		}
	}
}
