package multihost

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/netns"
)

// The partition tests cut hosts 4 and 5 off the LAN (each is then alone:
// the lab cuts a host's cable, not a group's uplink). Every side must
// withdraw the routes of the members it lost. When the cables come back,
// nobody runs a join: the agents must re-form the cluster by themselves, and
// every agent must serve the route view of before the cut. Profile fast:
// with lan, declaring the lost members dead takes several times longer,
// longest on a host cut off alone, which gets no confirmation of its
// suspicions and so waits out the longest suspicion timeout.

// TestPartitionHeals heals a short cut: memberlist still gossips to the
// members it declared dead for GossipToTheDeadTime (30 s in profile fast),
// which mends it besides namecast's reconnect loop.
func TestPartitionHeals(t *testing.T) {
	t.Parallel()
	partitionAndHeal(t, 0)
}

// TestLongPartitionHeals holds the cut past GossipToTheDeadTime, after which
// memberlist forgets the dead and never contacts them again: only namecast's
// reconnect loop and mDNS browsing can bring the sides back together.
func TestLongPartitionHeals(t *testing.T) {
	t.Parallel()
	partitionAndHeal(t, 32*time.Second)
}

// partitionAndHeal keeps the sides apart for hold more once every side has
// withdrawn the others' routes (so declared them dead), checking all along
// that they stay apart.
func partitionAndHeal(t *testing.T, hold time.Duration) {
	t.Helper()
	lab := netns.New(t, 5)
	bin := netns.BuildBinary(t, namecastPkg)
	as := startAgents(t, bin, lab.Hosts(), func(int) []string {
		return []string{"--discover", "prod", "--profile", "fast"}
	})
	waitAlive(t, 30*time.Second, as, names(as))
	registerAll(t, as, "before")
	waitTopics(t, 10*time.Second, as, topicsOf(as, "before")...)
	before, err := as[0].routeView()
	if err != nil {
		t.Fatal(err)
	}
	waitView(t, 10*time.Second, as, before)

	lab.LinkDown(3)
	lab.LinkDown(4)
	cut := time.Now()
	sides := [][]*agent{as[:3], as[3:4], as[4:]}
	poll(t, 30*time.Second, func() error { return split(sides[:1]) })
	t.Logf("hosts 1-3 withdrew the routes of hosts 4-5 %v after the cut", time.Since(cut).Round(time.Millisecond))
	// Alone, a host gets no confirmation of its suspicions and its probes
	// slow down as they keep failing (memberlist's awareness): it takes
	// longer.
	poll(t, 30*time.Second, func() error { return split(sides) })
	t.Logf("hosts 4 and 5 withdrew every other host's routes %v after the cut", time.Since(cut).Round(time.Millisecond))
	if hold > 0 {
		observeCut(t, hold, sides)
		poll(t, 30*time.Second, func() error { return split(sides) })
	}

	dropped := droppedOrigins(t, as)
	if slices.Contains(dropped, 0) { // every agent lost someone: the counter is read right
		t.Fatalf("origins dropped per agent during the cut: %v, want at least one each", dropped)
	}
	lab.LinkUp(3)
	lab.LinkUp(4)
	up := time.Now()
	// The issue asks for 30 s. Each agent's reconnect loop retries a failed
	// member every 3 s in profile fast, so 15 s leaves a loaded machine
	// room and still tells that loop from mDNS browsing, which has backed
	// off to tens of seconds by now (with the loop disabled, these tests
	// healed in 9 s and 25 s).
	healed := settle(t, 15*time.Second, 2*time.Second, as, before).Sub(up)
	waitAlive(t, 5*time.Second, as, names(as))
	// Nobody died during the heal, so nobody may have dropped anyone's
	// routes, not even for the moment between two polls: a stale verdict
	// passed on by a host that was alone must not cost live members their
	// routes (the counter sees every drop).
	if after := droppedOrigins(t, as); !slices.Equal(after, dropped) {
		t.Errorf("origins dropped per agent went from %v to %v during the heal: a live member's routes disappeared", dropped, after)
	}
	t.Logf("FIGURE link-up to identical route views on all 5 agents after a %v cut (profile fast): %v",
		up.Sub(cut).Round(time.Second), healed.Round(time.Millisecond))
}

// split checks that each side sees exactly its own members alive and
// serves exactly its own routes.
func split(sides [][]*agent) error {
	for _, side := range sides {
		want := topicsOf(side, "before")
		slices.Sort(want)
		for _, a := range side {
			alive, err := a.alive()
			if err != nil {
				return err
			}
			if !slices.Equal(alive, names(side)) {
				return fmt.Errorf("%s sees %v alive, want %v", a.node, alive, names(side))
			}
			topics, err := a.topics()
			if err != nil {
				return err
			}
			if !slices.Equal(topics, want) {
				return fmt.Errorf("%s serves topics %v, want %v", a.node, topics, want)
			}
		}
	}
	return nil
}

// observeCut lets the cut last hold, as a pulled cable would, checking
// throughout that no side hears of another. A false death inside a side,
// which a loaded machine can cause in profile fast, is no failure here:
// the caller checks the exact split again before the link comes up.
func observeCut(t *testing.T, hold time.Duration, sides [][]*agent) {
	t.Helper()
	end := time.After(hold)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if err := noCrossTalk(sides); err != nil {
			t.Fatal(err)
		}
		select {
		case <-end:
			return
		case <-tick.C:
		}
	}
}

// noCrossTalk checks that no agent sees a member of another side alive or
// serves its routes.
func noCrossTalk(sides [][]*agent) error {
	for _, side := range sides {
		mine := append(names(side), topicsOf(side, "before")...)
		for _, a := range side {
			alive, err := a.alive()
			if err != nil {
				return err
			}
			topics, err := a.topics()
			if err != nil {
				return err
			}
			for _, x := range append(alive, topics...) {
				if !slices.Contains(mine, x) {
					return fmt.Errorf("%s, cut off, sees %s of another side", a.node, x)
				}
			}
		}
	}
	return nil
}

// droppedOrigins reads, per agent, how many times it has dropped an
// origin's records (namecast_gossip_origins_dropped_total).
func droppedOrigins(t *testing.T, as []*agent) []float64 {
	t.Helper()
	out := make([]float64, len(as))
	for i, a := range as {
		n, err := a.counter("namecast_gossip_origins_dropped_total")
		if err != nil {
			t.Fatal(err)
		}
		out[i] = n
	}
	return out
}

// counter sums the samples of a counter on the agent's /metrics; 0 if it
// was never incremented.
func (a *agent) counter(name string) (float64, error) {
	req, err := http.NewRequest("GET", "http://"+httpAddr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := a.api.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: /metrics: %w", a.node, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("%s: /metrics: %w", a.node, err)
	}
	sum := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: /metrics: %q: %w", a.node, line, err)
		}
		sum += v
	}
	return sum, nil
}
