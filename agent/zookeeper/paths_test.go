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
// record, listed under the name the client wrote, with the data it wrote
// and its session as owner (issue 25: the name came back sorted, the data
// empty); the canonical spelling reaches it too.
func TestURLLeafIsTheURLRecord(t *testing.T) {
	s, reg := startServer(t)
	r := dialRaw(t, s)
	sess := r.handshake(false)
	for i, p := range []string{"/dubbo", "/dubbo/demo.Api", "/dubbo/demo.Api/providers"} {
		create(t, r, int32(i+1), p, 0)
	}
	raw := "dubbo://10.0.0.5:20880/demo.Api?side=provider&application=x"
	canon := "dubbo://10.0.0.5:20880/demo.Api?application=x&side=provider"
	leaf := "/dubbo/demo.Api/providers/" + javaEncode(raw)
	if h, _, _ := r.call(4, zkwire.OpCreate, &zkwire.CreateRequest{Path: leaf, Data: []byte("10.0.0.5"), ACL: openACL, Flags: zkwire.FlagEphemeral}); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 1 || got[0] != canon {
		t.Fatalf("URL records: %v", got)
	}
	_, d, _ := r.call(5, zkwire.OpGetChildren, &zkwire.PathWatch{Path: "/dubbo/demo.Api/providers"})
	var ch zkwire.ChildrenResponse
	ch.Decode(d)
	if len(ch.Children) != 1 || ch.Children[0] != javaEncode(raw) {
		t.Fatalf("children %v, want the name as written", ch.Children)
	}
	for i, p := range []string{leaf, "/dubbo/demo.Api/providers/" + javaEncode(canon)} {
		h, d, _ := r.call(int32(6+i), zkwire.OpGetData, &zkwire.PathWatch{Path: p})
		var got zkwire.GetDataResponse
		got.Decode(d)
		if h.Err != 0 || string(got.Data) != "10.0.0.5" || got.Stat.EphemeralOwner != sess.SessionID {
			t.Fatalf("getData %s: err %d data %q owner %x, want 10.0.0.5 owned by %x", p, h.Err, got.Data, got.Stat.EphemeralOwner, sess.SessionID)
		}
	}
	if h, _, _ := r.call(8, zkwire.OpSetData, &zkwire.SetDataRequest{Path: leaf, Data: []byte("x"), Version: -1}); h.Err != zkwire.ErrBadArguments {
		t.Fatalf("setData on a URL leaf: %d", h.Err)
	}
	if h, _, _ := r.call(9, zkwire.OpDelete, &zkwire.PathVersion{Path: leaf, Version: -1}); h.Err != 0 {
		t.Fatalf("delete by the client's spelling: %d", h.Err)
	}
	// A dynamic=false URL created persistent is a rule.
	rule := "override://0.0.0.0/demo.Api?category=providers&dynamic=false"
	create(t, r, 10, "/dubbo/demo.Api/providers/"+javaEncode(rule), 0)
	if _, ok := reg.Routes.Rule(routes.URLKey("demo.Api", "providers", rule)); !ok {
		t.Fatal("persistent URL leaf is not a rule")
	}
}
