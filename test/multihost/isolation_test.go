package multihost

import (
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/netns"
)

// TestClustersStayApart runs two clusters (--cluster blue on hosts 1-3,
// green on 4-5) on one LAN under the same --discover name, so each finds the
// other over mDNS and tries to join it: memberlist's label must refuse them,
// and neither cluster may learn the other's members or routes. Profile lan.
func TestClustersStayApart(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 5)
	bin := netns.BuildBinary(t, namecastPkg)
	as := startAgents(t, bin, lab.Hosts(), func(i int) []string {
		cluster := "blue"
		if i >= 3 {
			cluster = "green"
		}
		return []string{"--discover", "prod", "--cluster", cluster}
	})
	blue, green := as[:3], as[3:]
	waitAlive(t, 30*time.Second, blue, names(blue))
	waitAlive(t, 30*time.Second, green, names(green))

	// Proof that they did meet: every agent found the other cluster over
	// mDNS, tried to join it and was refused.
	for _, a := range as {
		if err := a.proc.WaitLog("could not join peers found over mDNS", 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	if err := blue[0].registerBroker(10911, "Blue"); err != nil {
		t.Fatal(err)
	}
	if err := green[0].registerBroker(10911, "Green"); err != nil {
		t.Fatal(err)
	}
	// Each route had as long to cross over as to reach its own cluster.
	waitTopics(t, 10*time.Second, blue, "Blue")
	waitTopics(t, 10*time.Second, green, "Green")
	for _, side := range [][]*agent{blue, green} {
		for _, a := range side {
			ms, err := a.members()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.Name)
			}
			if !slices.Equal(got, names(side)) {
				t.Errorf("%s knows members %v, want only its own cluster %v", a.node, got, names(side))
			}
		}
	}
}
