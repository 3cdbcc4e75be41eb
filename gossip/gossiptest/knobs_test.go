package gossiptest

import (
	"net"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

func TestAddressesAreDistinctAndAdvertisable(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 1)
	seen := map[string]bool{}
	for _, name := range []string{"a", "b", "c"} {
		tr := n.NewTransport(name)
		ip, port, err := tr.FinalAdvertiseAddr("", 0)
		if err != nil || ip.To4() == nil || port == 0 {
			t.Fatalf("FinalAdvertiseAddr = %v, %d, %v; want an IPv4 address and a port", ip, port, err)
		}
		if got := net.JoinHostPort(ip.String(), strconv.Itoa(port)); got != tr.Addr() {
			t.Errorf("advertised %s, but the transport is at %s", got, tr.Addr())
		}
		if seen[tr.Addr()] {
			t.Errorf("address %s given twice", tr.Addr())
		}
		seen[tr.Addr()] = true
	}
}

func TestRestartKeepsAddress(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 1)
	old := n.NewTransport("a")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("second running transport for one name did not panic")
			}
		}()
		n.NewTransport("a")
	}()
	_ = old.Shutdown()
	if restarted := n.NewTransport("a"); restarted.Addr() != old.Addr() {
		t.Errorf("restarted node moved from %s to %s", old.Addr(), restarted.Addr())
	}
}

func TestLossRate(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 42)
	a, b := n.NewTransport("a"), n.NewTransport("b")
	newSink(t, b)
	n.SetLoss(0.3)
	const total = 5000
	send(t, a, b, total)
	testutil.Eventually(t, 5*time.Second, func() error { return settled(n) })
	s := a.Stats()
	// One sender makes the decisions deterministic for the seed; the
	// tolerance is 3 standard deviations, so other seeds pass too.
	if rate := float64(s.PacketsDropped) / total; !within(rate, 0.3, 0.02) {
		t.Errorf("loss rate %.3f, want 0.3±0.02", rate)
	}
	if got := b.Stats().PacketsReceived; got != total-s.PacketsDropped {
		t.Errorf("received %d, want %d sent - %d dropped", got, total, s.PacketsDropped)
	}
}

func TestLinkLossIsDirectionalAndCombines(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 7)
	a, b := n.NewTransport("a"), n.NewTransport("b")
	newSink(t, a)
	newSink(t, b)
	n.SetLinkLoss("a", "b", 0.5)
	n.SetLoss(0.5)
	const total = 4000
	send(t, a, b, total)
	send(t, b, a, total)
	testutil.Eventually(t, 5*time.Second, func() error { return settled(n) })
	// a→b survives both stages: 0.5*0.5; b→a only the global one.
	if rate := float64(a.Stats().PacketsDropped) / total; !within(rate, 0.75, 0.03) {
		t.Errorf("a→b loss %.3f, want 0.75", rate)
	}
	if rate := float64(b.Stats().PacketsDropped) / total; !within(rate, 0.5, 0.03) {
		t.Errorf("b→a loss %.3f, want 0.5", rate)
	}
}

func TestDuplicate(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 3)
	a, b := n.NewTransport("a"), n.NewTransport("b")
	sb := newSink(t, b)
	n.SetDuplicate(0.25)
	const total = 4000
	send(t, a, b, total)
	testutil.Eventually(t, 5*time.Second, func() error { return settled(n) })
	dups := a.Stats().PacketsDuplicated
	if rate := float64(dups) / total; !within(rate, 0.25, 0.02) {
		t.Errorf("duplication rate %.3f, want 0.25±0.02", rate)
	}
	if got := sb.count(); got != total+int(dups) {
		t.Errorf("received %d packets, want %d + %d copies", got, total, dups)
	}
}

// The same seed and the same order of sends meet the same faults.
func TestSeedReproducesFaults(t *testing.T) {
	testutil.CheckLeaks(t)
	pattern := func(seed int64) []bool {
		n := newTestNetwork(t, seed)
		a, b := n.NewTransport("a"), n.NewTransport("b")
		newSink(t, b)
		n.SetLoss(0.5)
		var lost []bool
		for range 200 {
			before := a.Stats().PacketsDropped
			send(t, a, b, 1)
			lost = append(lost, a.Stats().PacketsDropped > before)
		}
		return lost
	}
	if !slices.Equal(pattern(9), pattern(9)) {
		t.Error("two networks seeded alike dropped different packets")
	}
	if slices.Equal(pattern(9), pattern(10)) {
		t.Error("different seeds dropped the same 200 packets")
	}
}

// Under synctest the fake clock makes arrival times exact.
func TestDelayBoundsAndOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNetwork(t, 5)
		a, b := n.NewTransport("a"), n.NewTransport("b")
		sb := newSink(t, b)

		n.SetDelay(20*time.Millisecond, 20*time.Millisecond)
		start := time.Now()
		send(t, a, b, 50)
		synctest.Wait()
		if got := sb.count(); got != 0 {
			t.Fatalf("%d packets arrived before their delay", got)
		}
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		got := sb.packets()
		if len(got) != 50 {
			t.Fatalf("got %d packets after the fixed delay, want 50", len(got))
		}
		for i, p := range got {
			if string(p.Buf) != strconv.Itoa(i) {
				t.Fatalf("a fixed delay reordered packets: #%d is %q", i, p.Buf)
			}
			if d := p.Timestamp.Sub(start); d != 20*time.Millisecond {
				t.Fatalf("packet %d took %v, want 20ms", i, d)
			}
		}

		n.SetDelay(10*time.Millisecond, 50*time.Millisecond)
		start = time.Now()
		send(t, a, b, 200)
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		got = sb.packets()[50:]
		if len(got) != 200 {
			t.Fatalf("got %d packets after the max delay, want 200", len(got))
		}
		reordered := 0
		for i, p := range got {
			if d := p.Timestamp.Sub(start); d < 10*time.Millisecond || d > 50*time.Millisecond {
				t.Errorf("packet %s took %v, outside [10ms, 50ms]", p.Buf, d)
			}
			if i > 0 && p.Timestamp.Before(got[i-1].Timestamp) {
				t.Errorf("packet %s arrived before the one handed over ahead of it", p.Buf)
			}
			if string(p.Buf) != strconv.Itoa(i) {
				reordered++
			}
		}
		if reordered == 0 {
			t.Error("a jittered delay never reordered packets")
		}
	})
}
