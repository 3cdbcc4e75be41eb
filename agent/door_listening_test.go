package agent_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

// lockedBuffer is a log sink the agent's goroutines write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Every door that serves says so once in the log, with its name and
// address, as an operator reading the log of a start expects.
func TestEveryDoorLogsListening(t *testing.T) {
	var logs lockedBuffer
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
