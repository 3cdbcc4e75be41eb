package zookeeper

import (
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

func TestJavaEncode(t *testing.T) {
	for in, want := range map[string]string{
		"dubbo://10.0.0.5:20880/demo.Api?side=provider": "dubbo%3A%2F%2F10.0.0.5%3A20880%2Fdemo.Api%3Fside%3Dprovider",
		"a b*c~d_e-f.g,h": "a+b*c%7Ed_e-f.g%2Ch",
		"ü":               "%C3%BC",
	} {
		if got := javaEncode(in); got != want {
			t.Errorf("javaEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURLPaths(t *testing.T) {
	raw := "dubbo://10.0.0.5:20880/demo.Api?side=provider&application=x"
	rec, canon, ok := urlOfPath("/dubbo/demo.Api/providers/" + javaEncode(raw))
	if !ok || rec.Interface != "demo.Api" || rec.Category != "providers" || rec.URL != "dubbo://10.0.0.5:20880/demo.Api?application=x&side=provider" {
		t.Fatalf("urlOfPath: %+v %v", rec, ok)
	}
	if canon != urlPath("demo.Api", "providers", rec.URL) {
		t.Fatalf("canonical %q", canon)
	}
	if p, ok := pathOfKey(routes.URLKey(rec.Interface, rec.Category, rec.URL)); !ok || p != canon {
		t.Fatalf("pathOfKey: %q %v", p, ok)
	}
	for _, p := range []string{
		"/dubbo/demo.Api/providers",                     // a directory
		"/other/demo.Api/providers/" + javaEncode(raw),  // another root: a generic znode
		"/dubbo/other.Api/providers/" + javaEncode(raw), // interface disagrees
		"/dubbo/demo.Api/consumers/" + javaEncode(raw),  // category disagrees
		"/dubbo/demo.Api/providers/not-a-url",
	} {
		if _, _, ok := urlOfPath(p); ok {
			t.Errorf("%s read as a URL leaf", p)
		}
	}
}

// A URL leaf created with parameters out of order is the canonical URL
// record; the client's own spelling still reaches it.
func TestURLLeafIsTheURLRecord(t *testing.T) {
	s, reg := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	for i, p := range []string{"/dubbo", "/dubbo/demo.Api", "/dubbo/demo.Api/providers"} {
		create(t, r, int32(i+1), p, 0)
	}
	raw := "dubbo://10.0.0.5:20880/demo.Api?side=provider&application=x"
	leaf := "/dubbo/demo.Api/providers/" + javaEncode(raw)
	create(t, r, 4, leaf, zkwire.FlagEphemeral)
	if got := reg.t.URLs("demo.Api", "providers"); len(got) != 1 || got[0] != "dubbo://10.0.0.5:20880/demo.Api?application=x&side=provider" {
		t.Fatalf("URL records: %v", got)
	}
	_, d, _ := r.call(5, zkwire.OpGetChildren, &zkwire.PathWatch{Path: "/dubbo/demo.Api/providers"})
	var ch zkwire.ChildrenResponse
	ch.Decode(d)
	if len(ch.Children) != 1 || ch.Children[0] != javaEncode("dubbo://10.0.0.5:20880/demo.Api?application=x&side=provider") {
		t.Fatalf("children %v", ch.Children)
	}
	if h, _, _ := r.call(6, zkwire.OpSetData, &zkwire.SetDataRequest{Path: leaf, Data: []byte("x"), Version: -1}); h.Err != zkwire.ErrBadArguments {
		t.Fatalf("setData on a URL leaf: %d", h.Err)
	}
	if h, _, _ := r.call(7, zkwire.OpDelete, &zkwire.PathVersion{Path: leaf, Version: -1}); h.Err != 0 {
		t.Fatalf("delete by the client's spelling: %d", h.Err)
	}
	// A dynamic=false URL created persistent is a rule.
	rule := "override://0.0.0.0/demo.Api?category=providers&dynamic=false"
	create(t, r, 8, "/dubbo/demo.Api/providers/"+javaEncode(rule), 0)
	if _, ok := reg.t.Rule(routes.URLKey("demo.Api", "providers", rule)); !ok {
		t.Fatal("persistent URL leaf is not a rule")
	}
}
