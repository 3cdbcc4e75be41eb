package zookeeper

import (
	"net/url"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

const providers = "/dubbo/demo.Api/providers"

var providerURL = "dubbo://10.0.0.5:20880/demo.Api?anyhost=true&application=demo&interface=demo.Api&side=provider"

// mkdirs creates the Dubbo directories the way dubbo-go does: create each
// level, NODEEXISTS ignored.
func mkdirs(t *testing.T, c *client, p string) {
	t.Helper()
	cur := ""
	for _, seg := range splitPath(p) {
		cur += "/" + seg
		if _, err := c.Create(cur, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", cur, err)
		}
	}
}

func splitPath(p string) []string {
	var out []string
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

// A provider registered over ZooKeeper through agent 0 is a child znode on
// agent 1, fires agent 1's child watch, and disappears everywhere when
// its session closes.
func TestProviderVisibleThroughAnotherAgent(t *testing.T) {
	c := cluster(t, 3)
	prov := connect(t, zkAddr(t, c, 0), 5*time.Second)
	cons := connect(t, zkAddr(t, c, 1), 5*time.Second)

	mkdirs(t, prov, providers)
	eventually(t, 10*time.Second, func() error { _, _, err := cons.Children(providers); return err })
	kids, _, watch, err := cons.ChildrenW(providers)
	if err != nil || len(kids) != 0 {
		t.Fatalf("children before registration: %v %v", kids, err)
	}
	name := url.QueryEscape(providerURL)
	if _, err := prov.Create(providers+"/"+name, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, watch, zk.EventNodeChildrenChanged, providers)
	if err := hasChild(cons, providers, name); err != nil {
		t.Fatal(err)
	}
	_, st, err := cons.Exists(providers + "/" + name)
	if err != nil || st == nil || st.EphemeralOwner == 0 {
		t.Fatalf("exists on the consumer's agent: %+v %v", st, err)
	}

	// The same URL is the agent's URL record: the HTTP API lists it.
	assertServiceListed(t, c, 2, "demo.Api", true)

	_, _, watch, err = cons.ChildrenW(providers)
	if err != nil {
		t.Fatal(err)
	}
	prov.Close()
	waitEvent(t, watch, zk.EventNodeChildrenChanged, providers)
	if kids := children(t, cons, providers); len(kids) != 0 {
		t.Fatalf("children after the provider closed its session: %v", kids)
	}
	assertServiceListed(t, c, 2, "demo.Api", false)
}
