package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/namecast/namecast/agent/agenttest"
)

// Agents told to leave at the same moment (a whole cluster stopped, or
// every agent of a test host) leave without an error: when the others are
// gone or leaving too there is nobody left to tell, and that is not a
// failure. Before, one of two often exited 1 with memberlist's "timeout
// waiting for leave broadcast" (seen as `namecast agent: timeout waiting
// for leave broadcast` after Ctrl-C on two agents).
func TestAgentsLeavingTogetherLeaveCleanly(t *testing.T) {
	c := agenttest.Start(t, 2)
	c.WaitMembers(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Agent(i).Leave(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("agent %d: Leave: %v", i, err)
		}
	}
}
