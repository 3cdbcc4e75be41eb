package agent_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/internal/testutil"
)

// TestNoFalseDeaths runs agents with the lan profile over a network that
// drops 10% of packets, with registrations flowing, and requires that no
// agent ever declares another dead or gone. CI runs 10 agents for 30 s;
// -chaos.duration=5m runs the soak, 20 agents for that long.
func TestNoFalseDeaths(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s soak test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	seed := chaos.Seed(t, *chaosSeed, "chaos.seed")
	n, length := 10, 30*time.Second
	if *chaosDuration > 0 {
		n, length = 20, *chaosDuration
	}
	deaths := chaos.NewDeathLog()
	net := gossiptest.NewNetwork(seed)
	t.Cleanup(net.Close)
	c := agenttest.Start(t, n, agenttest.WithProfile("lan"), agenttest.WithNetwork(net),
		func(cfg *agent.Config) { cfg.Logger = slog.New(deaths) })
	sys := agenttest.NewChaosSystem(c, net)
	m := chaos.NewModel()
	for _, name := range sys.Names() {
		m.Started(name)
	}
	err := chaos.Run(sys, m, chaos.Config{Seed: seed, Duration: length, Step: 50 * time.Millisecond,
		Loss: 0.1, NoFaults: true, TTLs: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range deaths.Events() {
		t.Errorf("false death: %s", e)
	}
	testutil.Eventually(t, 30*time.Second, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
	s := net.TotalStats()
	t.Logf("%d agents, %v at 10%% loss: %d of %d packets dropped, %d departures logged",
		n, length, s.PacketsDropped, s.PacketsSent, len(deaths.Events()))
}
