package consul

import (
	"encoding/base64"
	"strconv"
	"testing"
)

// KV: put, get, recurse, keys with a separator, raw, flags and binary
// values kept, check-and-set on the ModifyIndex, delete.
func TestKV(t *testing.T) {
	d := newDoor(t)
	var ok bool
	d.ok("PUT", "/v1/kv/config/app/port", "8080", &ok)
	d.ok("PUT", "/v1/kv/config/app/name?flags=42", "shop", &ok)
	bin := []byte{0, 0xff, 0xfe, 'x'}
	d.ok("PUT", "/v1/kv/config/bin", bin, &ok)
	d.ok("PUT", "/v1/kv/other", "x", &ok)
	var es []kvEntry
	h := d.ok("GET", "/v1/kv/config?recurse", nil, &es)
	if len(es) != 3 || es[0].Key != "config/app/name" || es[0].Flags != 42 || string(es[0].Value) != "shop" ||
		string(es[1].Value) != "8080" || string(es[2].Value) != string(bin) {
		t.Fatalf("recurse: %+v", es)
	}
	if idx, _ := strconv.ParseUint(h.Get("X-Consul-Index"), 10, 64); idx < es[2].ModifyIndex {
		t.Errorf("X-Consul-Index %d below the newest ModifyIndex %d", idx, es[2].ModifyIndex)
	}
	var keys []string
	d.ok("GET", "/v1/kv/config/?keys&separator=/", nil, &keys)
	if len(keys) != 2 || keys[0] != "config/app/" || keys[1] != "config/bin" {
		t.Errorf("keys: %v", keys)
	}
	if code, _, b := d.call("GET", "/v1/kv/config/app/port?raw", nil); code != 200 || string(b) != "8080" {
		t.Errorf("raw: %d %q", code, b)
	}
	if code, h, b := d.call("GET", "/v1/kv/none", nil); code != 404 || len(b) != 0 || h.Get("X-Consul-Index") == "" {
		t.Errorf("missing key: %d %q index %q; want 404, empty, an index", code, b, h.Get("X-Consul-Index"))
	}
	// The JSON Value is base64, as api.KVPair's []byte.
	_, _, raw := d.call("GET", "/v1/kv/config/app/port", nil)
	if want := `"Value":"` + base64.StdEncoding.EncodeToString([]byte("8080")) + `"`; !contains(raw, want) {
		t.Errorf("get: %s, want %s", raw, want)
	}
	// cas=0: only when absent.
	d.ok("PUT", "/v1/kv/config/app/port?cas=0", "9090", &ok)
	if ok {
		t.Error("cas=0 wrote over an existing key")
	}
	d.ok("GET", "/v1/kv/config/app/port", nil, &es)
	mod := es[0].ModifyIndex
	d.ok("PUT", "/v1/kv/config/app/port?cas="+strconv.FormatUint(mod+1, 10), "9090", &ok)
	if ok {
		t.Error("cas with a wrong index wrote")
	}
	d.ok("PUT", "/v1/kv/config/app/port?cas="+strconv.FormatUint(mod, 10), "9090", &ok)
	if !ok {
		t.Error("cas with the current index did not write")
	}
	d.ok("GET", "/v1/kv/config/app/port", nil, &es)
	if string(es[0].Value) != "9090" || es[0].ModifyIndex <= mod {
		t.Errorf("after cas: %+v (ModifyIndex was %d)", es, mod)
	}
	d.ok("DELETE", "/v1/kv/config/app/port?cas="+strconv.FormatUint(mod, 10), nil, &ok)
	if ok {
		t.Error("delete with a stale cas deleted")
	}
	d.ok("DELETE", "/v1/kv/config?recurse", nil, &ok)
	if code, _, _ := d.call("GET", "/v1/kv/config?recurse", nil); code != 404 {
		t.Errorf("after delete recurse: %d", code)
	}
	d.ok("GET", "/v1/kv/other", nil, &es)
}

func contains(b []byte, s string) bool { return len(s) == 0 || indexOf(string(b), s) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
