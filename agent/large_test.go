package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
)

// A registration of more ops than gossip carries one by one is announced
// and pulled instead; it must still reach every agent.
func TestLargeRegistrationPropagates(t *testing.T) {
	c := agenttest.Start(t, 4)
	topics := make([]string, 500)
	for i := range topics {
		topics[i] = fmt.Sprintf("Bulk%03d", i)
	}
	if status, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("bulk", "10.8.0.1:10911", topics...), nil); status != http.StatusOK {
		t.Fatalf("register: %d", status)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		var out struct {
			Topics []string `json:"topics"`
		}
		call(t, "GET", addr, "/v1/topics", nil, &out)
		if len(out.Topics) != len(topics) {
			return fmt.Errorf("%d topics, want %d", len(out.Topics), len(topics))
		}
		return nil
	})
	// Shrinking it to one topic is again a large change (499 deletes).
	call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("bulk", "10.8.0.1:10911", "Bulk000"), nil)
	everywhere(t, c, 10*time.Second, func(addr string) error {
		var out struct {
			Topics []string `json:"topics"`
		}
		call(t, "GET", addr, "/v1/topics", nil, &out)
		if len(out.Topics) != 1 {
			return fmt.Errorf("%d topics, want 1", len(out.Topics))
		}
		return nil
	})
}
