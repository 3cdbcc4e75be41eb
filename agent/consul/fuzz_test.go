package consul

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/consul/catalog"
)

// FuzzRequestDecoding feeds arbitrary bytes to everything the door
// decodes from a request: a service registration's body (and its checks),
// a check registration, a ?filter expression, and KV values with flags.
// None may panic; a registration either fails with a 4xx or makes a
// record within the bounds; a KV value comes back as it went in.
func FuzzRequestDecoding(f *testing.F) {
	f.Add([]byte(`{"ID":"web-1","Name":"web","Tags":["v1"],"Port":8080,"Meta":{"a":"b"},"Check":{"TTL":"10s"}}`), `Service.Tags contains "v1" and not (Node.Node == "x")`, uint64(0))
	f.Add([]byte(`{"Name":"x","Checks":[{"HTTP":"http://127.0.0.1/","Interval":1000000000,"Header":{"a":["b"]}},{"TCP":"1:1","Interval":"1s"}]}`), `"v1" in ServiceTags`, uint64(7))
	f.Add([]byte(`{"Name":"x","Check":{"TTL":"-1s"},"Meta":{"consul-x":"y"}}`), `ServiceMeta.version matches "^1\\."`, uint64(1<<63))
	f.Add([]byte("\x00\xff"), "((((", uint64(1))
	f.Fuzz(func(t *testing.T, body []byte, filter string, flags uint64) {
		var def serviceDefinition
		if err := decodeBody(httptest.NewRequest("PUT", "/", bytes.NewReader(body)), &def); err == nil {
			reg := catalog.Registration{ID: def.ID, Name: def.Name, Tags: def.Tags, Address: def.Address, Port: def.Port, Meta: def.Meta}
			if reg.ID == "" {
				reg.ID = reg.Name
			}
			if rec, err := reg.Record("n", 1, 1); err == nil && len(rec.Znode.Data) > catalog.MaxRecord {
				t.Fatalf("a record of %d bytes passed the bound", len(rec.Znode.Data))
			}
			for _, c := range append(def.Checks, def.Check) {
				if c != nil {
					c.checkDef()
				}
			}
		}
		var c checkDefinition
		if decodeBody(httptest.NewRequest("PUT", "/", bytes.NewReader(body)), &c) == nil {
			c.checkDef()
		}
		if fl, err := parseFilter(filter); err == nil {
			fl.match(fields{"Service.Tags": []string{"a"}, "Service.Meta": map[string]string{"k": "v"}, "Node.Node": "n"})
		} else if !strings.Contains(err.Error(), "Failed to create boolean expression evaluator") {
			t.Fatalf("filter error %q is not Consul's", err)
		}
		v, fl := decodeValue(encodeValue(body, flags))
		if !bytes.Equal(v, body) || fl != flags {
			t.Fatalf("KV value %q flags %d came back as %q %d", body, flags, v, fl)
		}
	})
}
