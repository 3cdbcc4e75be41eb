package consul

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/namecast/namecast/routes"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the answers")

// Each endpoint's answer to one fixed registry (a Consul registration
// with a TTL check, a broker and a Dubbo provider from other doors, a KV
// key), kept in testdata/golden; -update rewrites them. Indexes are
// zeroed (the KV ones are the rules' clock). Beside the golden answer,
// each is checked for the fields Consul's API docs show in their sample
// response for that endpoint (https://developer.hashicorp.com/consul/api-docs/
// agent, agent/service, agent/check, catalog, health, kv, status): a
// field a client reads that we left out fails here even when -update
// rewrote the file.
func TestGoldenAnswers(t *testing.T) {
	d := newDoor(t)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"ID": "redis1", "Name": "redis", "Tags": []string{"primary", "v1"},
		"Address": "127.0.0.1", "Port": 8000, "Meta": map[string]string{"redis_version": "4.0"},
		"Check": map[string]any{"CheckID": "redis-ttl", "Name": "Redis TTL", "TTL": "30s", "Status": "passing"}}, nil)
	d.host.Routes.ApplyLocal([]routes.Record{
		{Broker: &routes.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: 0, Addr: "10.0.0.2:10911"}},
		{URL: &routes.URL{Interface: "org.demo.Greeter", Category: "providers", URL: "dubbo://10.0.0.1:20880/org.demo.Greeter?side=provider&version=1.0"}},
	}, nil)
	d.ok("PUT", "/v1/kv/config/shop/port", "8080", nil)

	for _, tc := range []struct {
		name, path string
		// want are the fields of Consul's documented sample answer: of
		// the object, or of each element (a list), or of each value (a
		// map by ID), and of nested objects by "Outer.Field".
		want []string
	}{
		{"agent_self", "/v1/agent/self", []string{"Config", "Member", "Config.Datacenter", "Config.NodeName", "Config.NodeID", "Config.Server", "Config.Version"}},
		{"agent_members", "/v1/agent/members", []string{"Name", "Addr", "Port", "Tags", "Status", "ProtocolMin", "ProtocolMax", "ProtocolCur", "DelegateMin", "DelegateMax", "DelegateCur"}},
		{"agent_services", "/v1/agent/services", []string{"ID", "Service", "Tags", "Meta", "Port", "Address", "EnableTagOverride", "Weights", "Datacenter"}},
		{"agent_service", "/v1/agent/service/redis1", []string{"ID", "Service", "Tags", "Meta", "Port", "Address", "Weights"}},
		{"agent_checks", "/v1/agent/checks", []string{"Node", "CheckID", "Name", "Status", "Notes", "Output", "ServiceID", "ServiceName", "ServiceTags"}},
		{"agent_health_service_name", "/v1/agent/health/service/name/redis", []string{"AggregatedStatus", "Service", "Checks", "Service.ID", "Service.Service"}},
		{"catalog_services", "/v1/catalog/services", nil},
		{"catalog_service", "/v1/catalog/service/redis", []string{"ID", "Node", "Address", "Datacenter", "TaggedAddresses", "NodeMeta", "CreateIndex", "ModifyIndex",
			"ServiceAddress", "ServiceEnableTagOverride", "ServiceID", "ServiceName", "ServicePort", "ServiceMeta", "ServiceTags", "ServiceWeights"}},
		{"catalog_service_broker", "/v1/catalog/service/rocketmq-broker", []string{"ServiceID", "ServiceName", "ServiceAddress", "ServicePort", "ServiceTags", "ServiceMeta"}},
		{"catalog_nodes", "/v1/catalog/nodes", []string{"ID", "Node", "Address", "Datacenter", "TaggedAddresses", "Meta", "CreateIndex", "ModifyIndex"}},
		{"health_service", "/v1/health/service/redis", []string{"Node", "Service", "Checks", "Node.ID", "Node.Node", "Node.Address", "Node.Datacenter",
			"Node.TaggedAddresses", "Node.Meta", "Service.ID", "Service.Service", "Service.Tags", "Service.Address", "Service.Meta", "Service.Port", "Service.Weights"}},
		{"health_service_dubbo", "/v1/health/service/org.demo.Greeter?tag=dubbo&passing", []string{"Node", "Service", "Checks", "Service.Meta"}},
		{"health_checks", "/v1/health/checks/redis", []string{"Node", "CheckID", "Name", "Status", "Notes", "Output", "ServiceID", "ServiceName", "ServiceTags"}},
		{"health_state_passing", "/v1/health/state/passing", []string{"Node", "CheckID", "Name", "Status", "Notes", "Output", "ServiceID", "ServiceName"}},
		{"kv_get", "/v1/kv/config/shop/port", []string{"CreateIndex", "ModifyIndex", "LockIndex", "Key", "Flags", "Value"}},
		{"kv_keys", "/v1/kv/config/?keys", nil},
		{"status_leader", "/v1/status/leader", nil},
		{"status_peers", "/v1/status/peers", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			d.ok("GET", tc.path, nil, &v)
			zeroIndexes(v)
			for _, f := range tc.want {
				if !hasField(v, f) {
					t.Errorf("%s: no %s, which Consul's documented answer has", tc.path, f)
				}
			}
			got, _ := json.MarshalIndent(v, "", "  ")
			file := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				os.MkdirAll(filepath.Dir(file), 0o755)
				if err := os.WriteFile(file, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(bytes.TrimSpace(want), got) {
				t.Errorf("%s answers\n%s\nwant (%s)\n%s", tc.path, got, file, want)
			}
		})
	}
}

// zeroIndexes zeroes every CreateIndex, ModifyIndex and LockIndex.
func zeroIndexes(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "CreateIndex" || k == "ModifyIndex" || k == "LockIndex" {
				x[k] = 0
				continue
			}
			zeroIndexes(e)
		}
	case []any:
		for _, e := range x {
			zeroIndexes(e)
		}
	}
}

// hasField reports whether v has the dotted field: v itself an object
// with it, or every element (value) of a non-empty list (map of objects).
func hasField(v any, field string) bool {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return false
		}
		for _, e := range x {
			if !hasField(e, field) {
				return false
			}
		}
		return true
	case map[string]any:
		first, rest, nested := strings.Cut(field, ".")
		if e, ok := x[first]; ok {
			return !nested || hasField(e, rest)
		}
		if len(x) == 0 {
			return false
		}
		for _, e := range x { // a map by ID
			if _, ok := e.(map[string]any); !ok || !hasField(e, field) {
				return false
			}
		}
		return true
	}
	return false
}

// The shape check fails on a missing field, at any depth, in a list or a
// map by ID.
func TestShapeCheckFailsOnAMissingField(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`[{"Node":{"ID":"x"},"Service":{}}]`), &v)
	for field, want := range map[string]bool{"Node": true, "Node.ID": true, "Node.Address": false, "Checks": false} {
		if got := hasField(v, field); got != want {
			t.Errorf("hasField(%s) = %v, want %v", field, got, want)
		}
	}
	json.Unmarshal([]byte(`{"a":{"ID":"1"},"b":{"Port":2}}`), &v)
	if hasField(v, "ID") {
		t.Error("a map by ID with one value lacking ID passes")
	}
}
