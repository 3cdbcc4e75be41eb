package consul_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hashicorp/consul/api"

	"github.com/namecast/namecast/agent/agenttest"
)

// client is a consul/api client of agent i's Consul door.
func client(t *testing.T, c *agenttest.Cluster, i int) *api.Client {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address = c.Agent(i).Addr("consul")
	cl, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// putURL registers a Dubbo URL through agent i's HTTP API (another door).
func putURL(t *testing.T, c *agenttest.Cluster, i int, url string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"url": url})
	req, _ := http.NewRequest("PUT", "http://"+c.Agent(i).HTTPAddr()+"/v1/urls", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT /v1/urls: %d", resp.StatusCode)
	}
}
