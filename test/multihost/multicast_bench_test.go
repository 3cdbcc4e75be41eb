package multihost

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/multicast/mctest"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/internal/netns"
)

// BenchmarkMulticastRegisterToSubscriber times Dubbo's multicast registry
// across two hosts through their agents (profile lan, the default), each
// host's group on its loopback as in TestDubboMulticastAcrossHosts. Each
// iteration registers a provider of a new interface on host 1 and
// reports, as p50/p99 over the iterations:
//
//   - notify-ms: from the register datagram on host 1 until a consumer on
//     host 2, subscribed before, has heard of it (host 2's agent
//     announces it once gossip brings it);
//   - answer-ms: from a consumer on host 2 subscribing, once the provider
//     is there, until its subscribe is answered by host 2's agent.
//
// go test -run XXX -bench MulticastRegisterToSubscriber -benchtime 20x ./test/multihost/
func BenchmarkMulticastRegisterToSubscriber(b *testing.B) {
	lab := netns.New(b, 2)
	multicastOnLoopback(b, lab.Hosts())
	bin := netns.BuildBinary(b, namecastPkg)
	as := startAgents(b, bin, lab.Hosts(), func(i int) []string {
		f := []string{"--multicast", dubboGroup.String()}
		if i > 0 {
			f = append(f, "--retry-join", lab.Host(0).Addr()+":"+gossipPort)
		}
		return f
	})
	waitAlive(b, 60*time.Second, as, names(as))
	h1, h2 := lab.Host(0), lab.Host(1)
	prov := openOnLo(b, h1)
	cons := openOnLo(b, h2)
	var notify, answer []time.Duration
	b.ResetTimer()
	for i := range b.N {
		iface := fmt.Sprintf("com.example.Bench%d", i)
		sub := dubbo.MustParse("consumer://" + h2.Addr() + "/" + iface + "?category=providers&interface=" + iface + "&timeout=1")
		s := cons.Subscribe(sub)
		u := dubbo.MustParse(fmt.Sprintf("dubbo://%s:%d/%s?interface=%s&side=provider", h1.Addr(), 20000+i, iface, iface))
		start := time.Now()
		prov.Register(u)
		if err := waitNotified(s, u.String(), 30*time.Second); err != nil {
			b.Fatal(err)
		}
		notify = append(notify, time.Since(start))

		later := dubbo.MustParse(sub.String() + "&application=later")
		start = time.Now()
		s2 := cons.Subscribe(later.WithParam("timeout", "1000"))
		if err := waitNotified(s2, u.String(), 5*time.Second); err != nil {
			b.Fatal(err)
		}
		answer = append(answer, time.Since(start))
		cons.Unsubscribe(s)
		cons.Unsubscribe(s2)
	}
	b.StopTimer()
	report(b, "notify", notify)
	report(b, "answer", answer)
}

// waitNotified waits until a notification of s lists url.
func waitNotified(s *mctest.Subscription, url string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		select {
		case list := <-s.Notified:
			if slices.Contains(list, url) {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("no notification listing %s within %v", url, timeout)
		}
	}
}

func report(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	ms := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), name+"-p50-ms")
	b.ReportMetric(ms(0.99), name+"-p99-ms")
}

func openOnLo(tb testing.TB, h *netns.Host) *mctest.Registry {
	tb.Helper()
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
		tb.Fatal(err)
	}
	tb.Cleanup(r.Close)
	return r
}
