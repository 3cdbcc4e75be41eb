package chaos_test

import (
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/internal/testutil"
)

// TestNoFalseDeaths runs 20 nodes with the lan profile at 10% packet loss,
// with registrations flowing, and requires that no node ever declares
// another dead or gone: SWIM's indirect and TCP probes and suspicion
// refutation must absorb the loss. CI runs 1 minute of protocol time (about
// 30 s under -race); the soak, -chaos.duration=5m, runs the full 5 minutes
// (about 25 s without -race, 160 s with).
func TestNoFalseDeaths(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	seed := chaos.Seed(t, *seedFlag, "chaos.seed")
	length := time.Minute
	if *durationFlag > 0 {
		length = *durationFlag
	}
	synctest.Test(t, func(t *testing.T) {
		deaths := chaos.NewDeathLog()
		net := gossiptest.NewNetwork(seed)
		sys := startGossipSystem(t, net, 20, "lan", slog.New(deaths))
		defer func() {
			sys.close()
			time.Sleep(time.Minute) // lets memberlist's probe timers end
		}()
		m := chaos.NewModel()
		for _, name := range sys.Names() {
			m.Started(name)
		}
		testutil.Eventually(t, time.Minute, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
		err := chaos.Run(sys, m, chaos.Config{Seed: seed, Duration: length, Step: 100 * time.Millisecond,
			Loss: 0.1, NoFaults: true, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range deaths.Events() {
			t.Errorf("false death: %s", e)
		}
		testutil.Eventually(t, time.Minute, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
		s := net.TotalStats()
		t.Logf("%d nodes, %v at 10%% loss: %d of %d packets dropped, no member declared dead",
			len(sys.Names()), length, s.PacketsDropped, s.PacketsSent)
	})
}
