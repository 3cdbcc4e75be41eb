package zookeeper

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
)

// Watches set on agent 1 fire, once each, for changes made through agent 0
// (spec §8.2 item 4, across agents).
func TestWatchesFireForChangesThroughAnotherAgent(t *testing.T) {
	c := cluster(t, 3)
	w := connect(t, zkAddr(t, c, 0), 5*time.Second)
	r := connect(t, zkAddr(t, c, 1), 5*time.Second)

	if _, err := w.Create("/app", []byte("a"), 0, acl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, _, err := r.Get("/app"); return err })

	// exists on a missing node, then create: NodeCreated.
	_, _, ex, err := r.ExistsW("/app/x")
	if err != nil {
		t.Fatal(err)
	}
	// getChildren, then a child appears: NodeChildrenChanged.
	_, _, ch, err := r.ChildrenW("/app")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create("/app/x", []byte("1"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ex, zk.EventNodeCreated, "/app/x")
	waitEvent(t, ch, zk.EventNodeChildrenChanged, "/app")

	// getData, then setData: NodeDataChanged.
	eventually(t, 10*time.Second, func() error { _, _, err := r.Get("/app/x"); return err })
	_, _, dw, err := r.GetW("/app/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Set("/app/x", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, dw, zk.EventNodeDataChanged, "/app/x")
	data, st, err := r.Get("/app/x")
	if err != nil || string(data) != "2" || st.Version != 1 {
		t.Fatalf("after the data event: %q %+v %v (event %+v)", data, st, err, ev)
	}

	// exists on an existing node, then delete: NodeDeleted; a child watch
	// on the deleted node itself also gets NodeDeleted.
	_, _, ex, err = r.ExistsW("/app/x")
	if err != nil {
		t.Fatal(err)
	}
	_, _, ch, err = r.ChildrenW("/app")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Delete("/app/x", -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ex, zk.EventNodeDeleted, "/app/x")
	waitEvent(t, ch, zk.EventNodeChildrenChanged, "/app")
	_, _, pw, err := r.ChildrenW("/app")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Delete("/app", -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, pw, zk.EventNodeDeleted, "/app")

	// One-shot: none of them fires again.
	if _, err := w.Create("/app", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	for _, c := range []<-chan zk.Event{ex, ch, dw, pw} {
		noEvent(t, c, 300*time.Millisecond)
	}
}

// A watch fires for a registration made over the agent's HTTP API, and the
// registered URL is a child znode.
func TestHTTPRegistrationIsAChildZnode(t *testing.T) {
	c := cluster(t, 2)
	r := connect(t, zkAddr(t, c, 1), 5*time.Second)
	_, _, ew, err := r.ExistsW(providers)
	if err != nil {
		t.Fatal(err)
	}
	u := "dubbo://10.0.0.9:20880/demo.Api?application=http&interface=demo.Api&side=provider"
	if _, err := agent.Door[*httpapi.Server](c.Agent(0)).RegisterURL(u, 0); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, ew, zk.EventNodeCreated, providers)
	kids := children(t, r, providers)
	if len(kids) != 1 || kids[0] != javaEncode(u) {
		t.Fatalf("children %v, want [%s]", kids, javaEncode(u))
	}
	_, _, cw, err := r.ChildrenW(providers)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Door[*httpapi.Server](c.Agent(0)).UnregisterURL(u); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, cw, zk.EventNodeChildrenChanged, providers)
	// The implicit directory goes with its last child.
	eventually(t, 10*time.Second, func() error {
		if ok, _, err := r.Exists(providers); ok || err != nil {
			return fmt.Errorf("%s still exists (%v)", providers, err)
		}
		return nil
	})
}
