package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/routes"
)

// A broker is its name and id. Registered again under another cluster, it
// used to leave its first record beside the new one, with no TTL, and the
// views answered with either by map order, even pairing one record's
// cluster with the other's address. The new registration must replace the
// old, on the agent and on every replica.
func TestBrokerReregisteredUnderAnotherCluster(t *testing.T) {
	c := agenttest.Start(t, 2)
	http0 := c.Agent(0).HTTPAddr()
	reg := brokerReg("mover", "10.7.0.1:10911", "Moves")
	reg["cluster"] = "Old"
	if status, _ := call(t, "PUT", http0, "/v1/brokers", reg, nil); status != http.StatusOK {
		t.Fatalf("first PUT: %d", status)
	}
	reg["cluster"], reg["addr"] = "New", "10.7.0.2:10911"
	if status, _ := call(t, "PUT", http0, "/v1/brokers", reg, nil); status != http.StatusOK {
		t.Fatalf("second PUT: %d", status)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		var ci routes.ClusterInfo
		if status, _ := call(t, "GET", addr, "/v1/clusters", nil, &ci); status != http.StatusOK {
			return fmt.Errorf("clusters: %d", status)
		}
		bd := ci.BrokerAddrTable["mover"]
		if bd.Cluster != "New" || bd.BrokerAddrs[0] != "10.7.0.2:10911" || len(ci.ClusterAddrTable["Old"]) != 0 {
			return fmt.Errorf("cluster table %+v", ci)
		}
		if err := wantRoute(t, "Moves", "10.7.0.2:10911")(addr); err != nil {
			return err
		}
		return nil
	})
	for i := range 2 {
		if bs := c.Agent(i).Table().Brokers("mover"); len(bs) != 1 || bs[0].Cluster != "New" {
			t.Fatalf("agent-%d holds %+v, want the one registration under New", i, bs)
		}
	}
	// Unregistering under the cluster it left finds nothing; under the
	// one it is in, it goes.
	if status, _ := call(t, "DELETE", http0, "/v1/brokers/Old/mover/0", nil, nil); status != http.StatusNotFound {
		t.Fatalf("DELETE under the old cluster: %d, want 404", status)
	}
	if status, _ := call(t, "DELETE", http0, "/v1/brokers/New/mover/0", nil, nil); status != http.StatusOK {
		t.Fatalf("DELETE under the new cluster: %d", status)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if got := routeAddr(t, addr, "Moves"); got != "" {
			return fmt.Errorf("route of Moves still %q", got)
		}
		return nil
	})
}
