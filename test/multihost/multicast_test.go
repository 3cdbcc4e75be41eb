package multihost

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/multicast/mctest"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/internal/netns"
)

// dubboGroup is Dubbo's documented multicast registry address.
var dubboGroup = netip.MustParseAddrPort("224.5.6.7:1234")

// multicastOnLoopback keeps each host's Dubbo multicast on the host: lo
// does multicast, and the group is routed through it instead of the LAN,
// as on hosts of different subnets. Only the agents' gossip crosses.
func multicastOnLoopback(t testing.TB, hosts []*netns.Host) {
	t.Helper()
	for _, h := range hosts {
		for _, args := range [][]string{{"link", "set", "lo", "multicast", "on"}, {"route", "replace", "224.0.0.0/4", "dev", "lo"}} {
			if _, err := h.Run(context.Background(), "ip", args...); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// startMulticastAgents starts one agent per host with the multicast door
// on Dubbo's group, joined to the first, and waits for the cluster.
func startMulticastAgents(t *testing.T, lab *netns.Lab, extra ...string) []*agent {
	t.Helper()
	multicastOnLoopback(t, lab.Hosts())
	bin := netns.BuildBinary(t, namecastPkg)
	as := startAgents(t, bin, lab.Hosts(), func(i int) []string {
		f := append([]string{"--multicast", dubboGroup.String(), "--profile", "fast"}, extra...)
		if i > 0 {
			f = append(f, "--retry-join", lab.Host(0).Addr()+":"+gossipPort)
		}
		return f
	})
	waitAlive(t, 30*time.Second, as, names(as))
	return as
}

// dubboProcess opens a Dubbo MulticastRegistry in host h, on lo, where
// the host routes the group; NetUtils.getLocalHost() is the host's LAN
// address.
func dubboProcess(t *testing.T, h *netns.Host) *mctest.Registry {
	t.Helper()
	var r *mctest.Registry
	err := h.Do(func() error {
		lo, err := net.InterfaceByName("lo")
		if err != nil {
			return err
		}
		r, err = mctest.Open(dubboGroup, lo, h.IP())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// awaitHeard waits until s has heard exactly want.
func awaitHeard(t *testing.T, r *mctest.Registry, s *mctest.Subscription, timeout time.Duration, want ...string) {
	t.Helper()
	poll(t, timeout, func() error {
		if got := r.Heard(s); !slices.Equal(got, want) {
			return fmt.Errorf("the subscriber heard %q, want %q", got, want)
		}
		return nil
	})
}

// TestDubboMulticastAcrossHosts: a Dubbo provider registers by multicast
// on host 1, whose group stays on host 1; a consumer subscribed on host
// 2 hears of it from its own agent, a consumer subscribing later is
// answered by it, and when the provider's port closes (a crash, no
// unregister) host 1's agent withdraws it without any admin process and
// the consumer's set empties.
func TestDubboMulticastAcrossHosts(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 2)
	as := startMulticastAgents(t, lab, "--multicast-probe", "500ms")
	a, b := lab.Host(0), lab.Host(1)
	ln, err := a.Listen("tcp", a.Addr()+":20880")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	iface := "org.apache.dubbo.demo.DemoService"
	consumerURL := func(app string) dubbo.URL {
		return dubbo.MustParse("consumer://" + b.Addr() + "/" + iface + "?application=" + app +
			"&category=providers,configurators,routers&check=false&interface=" + iface + "&side=consumer")
	}
	early := dubboProcess(t, b)
	sub := early.Subscribe(consumerURL("early"))

	provider := dubbo.MustParse("dubbo://" + a.Addr() + ":20880/" + iface + "?anyhost=true&application=demo-provider" +
		"&dynamic=true&interface=" + iface + "&methods=sayHello&side=provider")
	dubboProcess(t, a).Register(provider)
	awaitHeard(t, early, sub, 10*time.Second, provider.String())

	// The same URL record every door shows: host 2's HTTP API lists it.
	var svc struct {
		URLs []string `json:"urls"`
	}
	if err := as[1].call("GET", "/v1/services/"+iface, nil, &svc); err != nil || !slices.Equal(svc.URLs, []string{provider.String()}) {
		t.Fatalf("GET /v1/services/%s on host 2: %+v, %v; want the provider", iface, svc, err)
	}

	// GET /v1/agent names the door's group; /metrics counts what it holds.
	var info map[string]any
	if err := as[0].call("GET", "/v1/agent", nil, &info); err != nil || info["multicastAddr"] != dubboGroup.String() {
		t.Fatalf("GET /v1/agent: multicastAddr %v (%v), want %s", info["multicastAddr"], err, dubboGroup)
	}
	if n, err := as[0].counter("namecast_multicast_held"); err != nil || n != 1 {
		t.Fatalf("host 1's agent: namecast_multicast_held %v (%v), want 1", n, err)
	}
	// Host 2's agent announced it; its own datagram, looped back to it,
	// is not taken for a registration of host 2's.
	if n, err := as[1].counter("namecast_multicast_held"); err != nil || n != 0 {
		t.Fatalf("host 2's agent: namecast_multicast_held %v (%v), want 0", n, err)
	}

	late := dubboProcess(t, b)
	sub2 := late.Subscribe(consumerURL("late")) // answered within Dubbo's 1000 ms wait
	if got := late.Heard(sub2); !slices.Equal(got, []string{provider.String()}) {
		t.Fatalf("a subscribe on host 2 was answered with %q, want the provider of host 1", got)
	}

	ln.Close()
	awaitHeard(t, early, sub, 20*time.Second)
	awaitHeard(t, late, sub2, 5*time.Second)
}

// TestAgentMulticastStaysOnItsHost: with the group routed over the LAN
// (every host's eth0 on one bridge), what host 2's agent multicasts (its
// announcements, TTL 0) never reaches a Dubbo process on host 1, while a
// Dubbo process's own datagrams (TTL 1) do. Host 1 runs no agent: only
// the LAN could bring it anything.
func TestAgentMulticastStaysOnItsHost(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 2)
	bin := netns.BuildBinary(t, namecastPkg)
	a, b := lab.Host(0), lab.Host(1)
	agentB := startAgents(t, bin, []*netns.Host{b}, func(int) []string { return []string{"--multicast", dubboGroup.String()} })[0]
	open := func(h *netns.Host) *mctest.Registry {
		var r *mctest.Registry
		err := h.Do(func() error {
			eth, err := net.InterfaceByName("eth0")
			if err != nil {
				return err
			}
			r, err = mctest.Open(dubboGroup, eth, h.IP())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return r
	}
	iface := "com.example.Marker"
	onA := open(a)
	s := onA.Subscribe(dubbo.MustParse("consumer://" + a.Addr() + "/" + iface + "?category=providers&interface=" + iface))
	// Host 2's agent announces a provider registered over its HTTP API
	// (TTL 0); then a Dubbo process on host 2 multicasts another (TTL 1)
	// on the same path.
	viaAgent := "dubbo://" + b.Addr() + ":1/" + iface + "?interface=" + iface + "&side=provider"
	if err := agentB.call("PUT", "/v1/urls", map[string]any{"url": viaAgent}, nil); err != nil {
		t.Fatal(err)
	}
	poll(t, 10*time.Second, func() error {
		if n, err := agentB.counter("namecast_multicast_announced_total"); err != nil || n < 1 {
			return fmt.Errorf("host 2's agent announced %v (%v)", n, err)
		}
		return nil
	})
	marker := dubbo.MustParse("dubbo://" + b.Addr() + ":2/" + iface + "?interface=" + iface + "&side=provider")
	open(b).Register(marker)
	awaitHeard(t, onA, s, 10*time.Second, marker.String())
}
