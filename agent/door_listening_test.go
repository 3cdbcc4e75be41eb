package agent_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// Every door that serves says so once in the log, with its name and
// address, as an operator reading the log of a start expects.
func TestEveryDoorLogsListening(t *testing.T) {
	var logs testutil.Buffer
	c := agenttest.Start(t, 1, func(cfg *agent.Config) {
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	out := logs.String()
	for _, d := range c.Agent(0).Doors() {
		if strings.Contains(d.Name, "-") {
			continue // a door's second listener (nacos-grpc) is on its door's line
		}
		found := false
		for _, line := range strings.Split(out, "\n") {
			found = found || strings.Contains(line, `msg="door listening"`) && strings.Contains(line, " door="+d.Name+" addr="+d.Addr)
		}
		if !found {
			t.Errorf("no door listening line for %s (%s) in:\n%s", d.Name, d.Addr, out)
		}
	}
}
