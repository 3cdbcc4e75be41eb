package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

func TestRestartWithDataDirRejoinsWithoutJoin(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 3, agenttest.WithDataDirs(dir))
	// Wait until agent 2 has saved who its peers are.
	testutil.Eventually(t, 10*time.Second, func() error {
		_, err := os.Stat(filepath.Join(dir, "agent-2", "members.json"))
		return err
	})
	call(t, "PUT", c.Agent(2).HTTPAddr(), "/v1/brokers", brokerReg("dd", "10.7.0.1:10911", "BeforeRestart"), nil)
	everywhere(t, c, 10*time.Second, wantRoute(t, "BeforeRestart", "10.7.0.1:10911"))

	c.Crash(2)
	everywhere(t, c, 15*time.Second, wantRoute(t, "BeforeRestart", ""))
	c.RestartWith(2, func(cfg *agent.Config) { cfg.Join = nil })
	c.WaitMembers(3)
	call(t, "PUT", c.Agent(2).HTTPAddr(), "/v1/brokers", brokerReg("dd", "10.7.0.2:10911", "AfterRestart"), nil)
	everywhere(t, c, 10*time.Second, wantRoute(t, "AfterRestart", "10.7.0.2:10911"))
}

func TestPersistentRulesSurviveEveryAgentRestarting(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 2, agenttest.WithDataDirs(dir))
	rule := "override://0.0.0.0/com.example.Svc?category=configurators&dynamic=false&weight=200"
	if status, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/urls", map[string]string{"url": rule}, nil); status != 200 {
		t.Fatalf("register rule: %d", status)
	}
	hasRule := func(addr string) error {
		var out struct {
			URLs []string `json:"urls"`
		}
		call(t, "GET", addr, "/v1/services/com.example.Svc?category=configurators", nil, &out)
		if len(out.URLs) != 1 {
			return fmt.Errorf("configurators %v", out.URLs)
		}
		return nil
	}
	everywhere(t, c, 10*time.Second, hasRule)
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, n := range []string{"agent-0", "agent-1"} {
			if _, err := os.Stat(filepath.Join(dir, n, "rules.json")); err != nil {
				return err
			}
		}
		return nil
	})
	c.Crash(0)
	c.Crash(1)
	c.RestartWith(0, func(cfg *agent.Config) { cfg.Join = nil })
	c.RestartWith(1, func(cfg *agent.Config) { cfg.Join = []string{c.Agent(0).GossipAddr()} })
	everywhere(t, c, 10*time.Second, hasRule)
}
