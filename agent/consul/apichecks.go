package consul

import (
	"fmt"
	"sync"

	"github.com/namecast/namecast/agent/consul/catalog"
)

// apiChecks is the runner the door uses when the agent gives it none:
// it runs nothing, and a TTL check's status is what the API last set
// (its TTL never runs out); other checks stay at their first status.
// Package agent/consul/checks is the runner that runs them.
type apiChecks struct {
	report func(checkID, status, output string)
	mu     sync.Mutex
	ttl    map[string]bool // check ID -> is a TTL check
}

var _ catalog.Runner = (*apiChecks)(nil)

func newAPIChecks(report func(checkID, status, output string)) *apiChecks {
	return &apiChecks{report: report, ttl: map[string]bool{}}
}

func (c *apiChecks) Set(d catalog.CheckDef) error {
	c.mu.Lock()
	c.ttl[d.ID] = d.TTL > 0
	c.mu.Unlock()
	return nil
}

func (c *apiChecks) Remove(id string) {
	c.mu.Lock()
	delete(c.ttl, id)
	c.mu.Unlock()
}

func (c *apiChecks) UpdateTTL(id, status, output string) error {
	c.mu.Lock()
	ttl := c.ttl[id]
	c.mu.Unlock()
	if !ttl {
		return fmt.Errorf("CheckID %q does not have associated TTL", id)
	}
	c.report(id, status, output)
	return nil
}

func (c *apiChecks) Close() {}
