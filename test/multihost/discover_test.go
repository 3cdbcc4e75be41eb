package multihost

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/netns"
)

// TestDiscoverFormsOneCluster starts five agents given nothing but
// --discover (profile lan, the default) and times how long the cluster takes
// to form from cold: process start to every agent listing all five alive.
func TestDiscoverFormsOneCluster(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 5)
	bin := netns.BuildBinary(t, namecastPkg)

	start := time.Now()
	as := startAgents(t, bin, lab.Hosts(), func(int) []string { return []string{"--discover", "prod"} })
	waitAlive(t, 30*time.Second, as, names(as))
	t.Logf("FIGURE cold start to a 5-host cluster with --discover only (profile lan): %v", time.Since(start).Round(time.Millisecond))

	// Each agent advertised its own lab address, found from its 0.0.0.0
	// bind, so every member is reachable at the address the others hold.
	ms, err := as[4].members()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if want := as[i].gossipAddr(); m.Name != as[i].node || m.Addr != want {
			t.Errorf("member %d is %s at %s, want %s at %s", i, m.Name, m.Addr, as[i].node, want)
		}
	}

	if err := as[0].registerBroker(10911, "Orders"); err != nil {
		t.Fatal(err)
	}
	poll(t, 10*time.Second, func() error {
		r, err := as[4].route("Orders")
		if err != nil {
			return err
		}
		if len(r.BrokerDatas) != 1 || r.BrokerDatas[0].BrokerAddrs["0"] != lab.Host(0).Addr()+":10911" {
			t.Fatalf("h5 serves route %+v for Orders, want broker-h1 at %s:10911", r, lab.Host(0).Addr())
		}
		return nil
	})
}

// TestAdvertisesLANAddressBesideIdleBridge gives host 1 what a Docker host
// has once its containers stopped: a bridge, docker0, that is up but has no
// carrier and holds a private address, beside a LAN address that is not
// RFC 1918. The agent must advertise, and discover over, the LAN interface:
// advertising the bridge's address left it alone, at an address no peer has
// a route to. Profile lan.
func TestAdvertisesLANAddressBesideIdleBridge(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 3)
	bin := netns.BuildBinary(t, namecastPkg)
	h := lab.Host(0)
	for _, args := range [][]string{
		{"link", "add", "docker0", "type", "bridge"},
		{"addr", "add", "172.17.0.1/16", "dev", "docker0"},
		{"link", "set", "docker0", "up"},
		// A container's port coming and going is what leaves the bridge
		// without carrier; a bridge that never had one reports carrier.
		{"link", "add", "veth0", "master", "docker0", "type", "veth", "peer", "name", "veth1"},
		{"link", "del", "veth0"},
	} {
		if _, err := h.Run(t.Context(), "ip", args...); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, 5*time.Second, func() error {
		out, err := h.Run(t.Context(), "ip", "-o", "link", "show", "docker0")
		if err == nil && !strings.Contains(string(out), "NO-CARRIER") {
			err = fmt.Errorf("docker0 still has carrier: %s", out)
		}
		return err
	})

	as := startAgents(t, bin, lab.Hosts(), func(int) []string { return []string{"--discover", "prod"} })
	if err := as[0].proc.WaitLog("interface=eth0 advertise="+as[0].gossipAddr(), time.Second); err != nil {
		t.Fatal(err)
	}
	waitAlive(t, 30*time.Second, as, names(as))
}
