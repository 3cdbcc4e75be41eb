package chaos_test

import (
	"log/slog"
	"strings"
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
		if t.Failed() {
			t.Logf("failure detector trail:\n%s", strings.Join(deaths.Trail(), "\n"))
		}
		testutil.Eventually(t, time.Minute, func() error { return chaos.Check(m, sys.Replicas(), time.Now()) })
		s := net.TotalStats()
		t.Logf("%d nodes, %v at 10%% loss: %d of %d packets dropped, no member declared dead",
			len(sys.Names()), length, s.PacketsDropped, s.PacketsSent)
	})
}

// TestDeathLogKeepsTheDetectorsTrail checks what a false death's report is
// made of: departures as events, and memberlist's own lines about
// suspicion, with the node that logged them, as the trail.
func TestDeathLogKeepsTheDetectorsTrail(t *testing.T) {
	deaths := chaos.NewDeathLog()
	a := slog.New(deaths).With("node", "a")
	ml := a.With("component", "memberlist")
	ml.Info("Suspect b has failed, no acks received")
	ml.Warn("Refuting a suspect message (from: c)")
	ml.Debug("Failed UDP ping: b (timeout reached)") // below info: not kept
	a.Info("member dead", "member", "b")
	a.Info("member joined", "member", "d") // gossip's, not memberlist's: not kept

	if got := deaths.Events(); len(got) != 1 || !strings.Contains(got[0], "a saw b") {
		t.Errorf("events %q, want the one death of b seen by a", got)
	}
	trail := deaths.Trail()
	if len(trail) != 3 || !strings.Contains(trail[0], "a: Suspect b has failed") ||
		!strings.Contains(trail[1], "Refuting") || !strings.Contains(trail[2], "member dead") {
		t.Errorf("trail %q", trail)
	}
	if got := deaths.Trail("c"); len(got) != 1 {
		t.Errorf("trail of c %q, want the refutation only", got)
	}
	if got := deaths.Trail("b-1"); len(got) != 0 {
		t.Errorf("trail of b-1 %q, want none (b is not b-1)", got)
	}
	if n := deaths.Suspicions(); n != 1 {
		t.Errorf("%d suspicions counted, want 1", n)
	}
}
