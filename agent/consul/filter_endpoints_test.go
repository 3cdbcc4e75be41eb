package consul

import (
	"net/url"
	"reflect"
	"testing"
)

// ?filter on /v1/catalog/services and /v1/agent/checks keeps what it
// matches, as Consul's does, instead of answering everything.
func TestFilterOnServicesAndChecks(t *testing.T) {
	d := newDoor(t)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "web", "Tags": []string{"b", "a"},
		"Check": map[string]any{"CheckID": "web-ttl", "Name": "web ttl", "TTL": "30s"}}, nil)
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "db", "Tags": []string{"x"},
		"Check": map[string]any{"CheckID": "db-ttl", "Name": "db ttl", "TTL": "30s"}}, nil)
	var services map[string][]string
	d.ok("GET", "/v1/catalog/services?filter="+url.QueryEscape(`ServiceName == "web"`), nil, &services)
	if want := map[string][]string{"web": {"a", "b"}}; !reflect.DeepEqual(services, want) {
		t.Errorf("catalog/services?filter = %v, want %v", services, want)
	}
	var checks map[string]map[string]any
	d.ok("GET", "/v1/agent/checks?filter="+url.QueryEscape(`ServiceName == "db"`), nil, &checks)
	if len(checks) != 1 || checks["db-ttl"] == nil {
		t.Errorf("agent/checks?filter = %v, want db-ttl alone", checks)
	}
}
