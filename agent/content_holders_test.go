package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// Item 3: one broker held by two doors of one agent (a RocketMQ
// registration and an HTTP one with a TTL). When one lets go, every agent
// serves what the other last registered, at once: before, the content of
// the door that let go stayed, held by the other's lease, until the
// other registered again (the broker's next DataVersion change, or the
// HTTP client's next renewal).
func TestRemainingHolderContentServedWhenADoorLetsGo(t *testing.T) {
	rmqFirst := javaBroker(0, "10.41.2.1:10911", 4, 7)
	t.Run("HTTP lets go", func(t *testing.T) {
		testutil.CheckLeaks(t)
		c := contentCluster(t)
		mustRegister(t, dialRMQ(t, c, 0), rmqFirst)
		rmqServes(t, c, map[int64]string{0: rmqFirst.Addr}, 4)
		h := c.Agent(0).HTTPAddr()
		if status, _ := call(t, "PUT", h, "/v1/brokers", httpBroker("10.41.2.2:10911", 8), nil); status != http.StatusOK {
			t.Fatalf("PUT: %d", status)
		}
		rmqServes(t, c, map[int64]string{0: "10.41.2.2:10911"}, 8)
		if status, _ := call(t, "DELETE", h, "/v1/brokers/DefaultCluster/content/0", nil, nil); status != http.StatusOK {
			t.Fatalf("DELETE: %d", status)
		}
		took := rmqServes(t, c, map[int64]string{0: rmqFirst.Addr}, 4)
		t.Logf("every agent served the RocketMQ registration's content %v after the HTTP one let go", took)
	})
	t.Run("RocketMQ lets go", func(t *testing.T) {
		for _, how := range []string{"connection closed", "unregistered"} {
			t.Run(how, func(t *testing.T) {
				testutil.CheckLeaks(t)
				c := contentCluster(t)
				h := c.Agent(0).HTTPAddr()
				if status, _ := call(t, "PUT", h, "/v1/brokers", httpBroker("10.41.2.2:10911", 8), nil); status != http.StatusOK {
					t.Fatalf("PUT: %d", status)
				}
				rmqServes(t, c, map[int64]string{0: "10.41.2.2:10911"}, 8)
				cl := dialRMQ(t, c, 0)
				mustRegister(t, cl, rmqFirst)
				rmqServes(t, c, map[int64]string{0: rmqFirst.Addr}, 4)
				if how == "unregistered" {
					if err := cl.Unregister(rmqFirst); err != nil {
						t.Fatal(err)
					}
				} else {
					cl.Close()
				}
				took := rmqServes(t, c, map[int64]string{0: "10.41.2.2:10911"}, 8)
				t.Logf("every agent served the HTTP registration's content %v after the RocketMQ one let go", took)
				// TBW102 was the RocketMQ registration's alone: it went with it.
				everywhere(t, c, 10*time.Second, func(h string) error {
					if status, _ := call(t, "GET", h, "/v1/topics/TBW102", nil, nil); status != http.StatusNotFound {
						return fmt.Errorf("TBW102, registered only over RocketMQ, still served (%d)", status)
					}
					return nil
				})
			})
		}
	})
}
