package zookeeper

import (
	"bytes"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

var acl = zk.WorldACL(zk.PermAll)

// Every supported operation and the error codes ZooKeeper gives, through
// agent 0 of a 3-agent cluster; Stat fields as the spec's §8.2 lists them.
// The errors that depend on what exists are also checked on agent 2, for
// nodes created through agent 0.
func TestOperationsAndErrors(t *testing.T) {
	c := cluster(t, 3)
	cl := connect(t, zkAddr(t, c, 0), 5*time.Second)
	far := connect(t, zkAddr(t, c, 2), 5*time.Second)

	if _, err := cl.Create("/cfg", []byte("v0"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Create("/cfg", nil, 0, acl); err != zk.ErrNodeExists {
		t.Fatalf("create existing: %v", err)
	}
	if _, err := cl.Create("/missing/child", nil, 0, acl); err != zk.ErrNoNode {
		t.Fatalf("create under a missing parent: %v", err)
	}
	if _, err := cl.Create("/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Create("/eph/child", nil, 0, acl); err != zk.ErrNoChildrenForEphemerals {
		t.Fatalf("child of an ephemeral: %v", err)
	}
	if _, err := cl.Create("/cfg/a", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := cl.Delete("/cfg", -1); err != zk.ErrNotEmpty {
		t.Fatalf("delete non-empty: %v", err)
	}
	eventually(t, 10*time.Second, func() error { return hasChild(far, "/cfg", "a") })
	if err := far.Delete("/cfg", -1); err != zk.ErrNotEmpty {
		t.Fatalf("delete non-empty on another agent: %v", err)
	}
	if _, err := far.Create("/cfg", nil, 0, acl); err != zk.ErrNodeExists {
		t.Fatalf("create existing on another agent: %v", err)
	}
	if _, err := far.Create("/eph/child", nil, 0, acl); err != zk.ErrNoChildrenForEphemerals {
		t.Fatalf("child of an ephemeral on another agent: %v", err)
	}
	if _, err := far.Set("/cfg", nil, 5); err != zk.ErrBadVersion {
		t.Fatalf("stale version on another agent: %v", err)
	}
	if err := cl.Delete("/nope", -1); err != zk.ErrNoNode {
		t.Fatalf("delete missing: %v", err)
	}
	if _, err := cl.Set("/nope", nil, -1); err != zk.ErrNoNode {
		t.Fatalf("set missing: %v", err)
	}

	data, st, err := cl.Get("/cfg")
	if err != nil || !bytes.Equal(data, []byte("v0")) || st.Version != 0 || st.EphemeralOwner != 0 ||
		st.DataLength != 2 || st.NumChildren != 1 {
		t.Fatalf("get /cfg: %q %+v %v", data, st, err)
	}
	_, est, err := cl.Exists("/eph")
	if err != nil || est.EphemeralOwner != cl.SessionID() {
		t.Fatalf("ephemeral owner %x, session %x (%v)", est.EphemeralOwner, cl.SessionID(), err)
	}
	st2, err := cl.Set("/cfg", []byte("v1"), 0)
	if err != nil || st2.Version != 1 || st2.Mzxid <= st.Mzxid || st2.Czxid != st.Czxid {
		t.Fatalf("set: %+v (before %+v) %v", st2, st, err)
	}
	if _, err := cl.Set("/cfg", []byte("v2"), 0); err != zk.ErrBadVersion {
		t.Fatalf("set with a stale version: %v", err)
	}
	if err := cl.Delete("/cfg/a", 7); err != zk.ErrBadVersion {
		t.Fatalf("delete with a wrong version: %v", err)
	}

	// The parent's child version and pzxid move with its children.
	_, before, _ := cl.Exists("/cfg")
	if _, err := cl.Create("/cfg/b", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	_, after, _ := cl.Exists("/cfg")
	if after.Cversion == before.Cversion || after.Pzxid <= before.Pzxid || after.NumChildren != 2 || after.Version != before.Version {
		t.Fatalf("parent stat after a child create: %+v, before %+v", after, before)
	}
	if err := cl.Delete("/cfg/b", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Sync("/cfg"); err != nil {
		t.Fatal(err)
	}
	kids := children(t, cl, "/")
	want := map[string]bool{"cfg": true, "eph": true, "zookeeper": true}
	for _, k := range kids {
		delete(want, k)
	}
	if len(want) != 0 {
		t.Fatalf("children of /: %v", kids)
	}
	if data, _, err := cl.Get("/zookeeper/config"); err != nil || len(data) != 0 {
		t.Fatalf("/zookeeper/config: %q %v", data, err)
	}
	// As on ZooKeeper: /zookeeper takes children, /zookeeper/config is
	// read-only.
	if _, err := cl.Create("/zookeeper/config/x", nil, 0, acl); err != zk.ErrNoAuth {
		t.Fatalf("create under /zookeeper/config: %v", err)
	}
	if _, err := cl.Create("/seq-", nil, zk.FlagSequence, acl); err == nil {
		t.Fatal("sequential create accepted")
	}
	if _, err := cl.Multi(&zk.CreateRequest{Path: "/m", Acl: acl}); err == nil {
		t.Fatal("multi accepted")
	}
	if err := cl.Delete("/cfg/a", -1); err != nil {
		t.Fatal(err)
	}
	if err := cl.Delete("/cfg", 1); err != nil {
		t.Fatal(err)
	}
}
