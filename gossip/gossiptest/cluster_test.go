package gossiptest

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// convergeTimeout is generous: with testConfig a cluster converges, or
// detects a partition, in a second or two, but a 2-core race build shared
// with other jobs can be many times slower.
const convergeTimeout = 20 * time.Second

// TestClusterConverges runs in a synctest bubble: with testConfig's
// 50 ms probe timeout and sub-second suspicion, a real clock on a starved
// 2-core race build lets members declare each other dead
// before they have run at all, and with GossipToTheDeadTime 0 the view
// does not heal in 20 s. In
// the bubble time moves only while every goroutine is blocked, so no
// deadline passes because the machine is busy: a faultless network must
// converge every time.
func TestClusterConverges(t *testing.T) {
	testutil.CheckLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := startCluster(t, 5, clusterSpec{seed: 1, drain: time.Minute})
		testutil.Eventually(t, convergeTimeout, func() error {
			return c.sees(names(0, 1, 2, 3, 4), c.all()...)
		})

		// Joins use streams, four of them accepted by node-0; after that,
		// probes and gossip keep packets flowing to and from every node.
		if got := c.trs[0].Stats().StreamsAccepted; got < 4 {
			t.Errorf("node-0 accepted %d streams, want at least the 4 joins", got)
		}
		testutil.Eventually(t, convergeTimeout, func() error {
			for i, tr := range c.trs {
				if s := tr.Stats(); s.PacketsSent < 10 || s.PacketsReceived < 10 || s.BytesReceived() == 0 {
					return fmt.Errorf("%s has little traffic: %+v", nodeName(i), s)
				}
			}
			return nil
		})
		if s := c.net.TotalStats(); s.PacketsDropped != 0 || s.PacketsDuplicated != 0 {
			t.Errorf("packets lost or duplicated on a faultless network: %+v", s)
		}
	})
}

// In a synctest bubble, as TestClusterConverges and for the same reason:
// on a real clock a starved race build declares members dead before the
// partition.
func TestClusterPartitionHealRejoin(t *testing.T) {
	testutil.CheckLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := startCluster(t, 5, clusterSpec{seed: 2, drain: time.Minute})
		sideA, sideB := []int{0, 1}, []int{2, 3, 4}
		testutil.Eventually(t, convergeTimeout, func() error {
			return c.sees(names(0, 1, 2, 3, 4), c.all()...)
		})

		c.net.Partition(names(sideA...), names(sideB...))
		testutil.Eventually(t, convergeTimeout, func() error {
			if err := c.sees(names(sideA...), sideA...); err != nil {
				return err
			}
			return c.sees(names(sideB...), sideB...)
		})
		// Each side reached its verdict through suspicion that timed out, not,
		// say, through a node leaving.
		for _, pair := range [][2][]int{{sideA, sideB}, {sideB, sideA}} {
			observers, failed := pair[0], pair[1]
			for _, f := range failed {
				if !c.anyLogged(observers, fmt.Sprintf("Marking %s as failed, suspect timeout reached", nodeName(f))) {
					t.Errorf("no node of %v declared %s failed by suspicion timeout", names(observers...), nodeName(f))
				}
			}
		}

		// Healing the network is not enough: each side has forgotten the other
		// and neither probes, gossips nor syncs with nodes it does not know.
		// But a probe begun before the verdict can still be retrying across
		// (indirectly, or over a stream) and would carry the news once healed,
		// so heal only when nothing has tried to cross for a while.
		c.waitNothingCrosses(t)
		c.net.Heal()
		mark := c.net.TotalStats().PacketsReceived
		testutil.Eventually(t, convergeTimeout, func() error {
			if got := c.net.TotalStats().PacketsReceived - mark; got < 60 {
				return fmt.Errorf("only %d packets received since Heal", got)
			}
			return nil
		})
		if err := c.knowsAny(sideA, names(sideB...)); err != nil {
			t.Fatalf("sides merged without a rejoin: %v", err)
		}
		if err := c.knowsAny(sideB, names(sideA...)); err != nil {
			t.Fatalf("sides merged without a rejoin: %v", err)
		}

		c.join(t, 0, 2)
		testutil.Eventually(t, convergeTimeout, func() error {
			return c.sees(names(0, 1, 2, 3, 4), c.all()...)
		})
	})
}

// waitNothingCrosses waits until 60 packets in a row were sent without a
// packet dropped or a dial refused: on a network without loss, the nodes have
// stopped trying to reach the other side. 60 packets take several probe
// intervals, longer than any one probe lasts.
func (c *cluster) waitNothingCrosses(t *testing.T) {
	t.Helper()
	var last Stats
	testutil.Eventually(t, convergeTimeout, func() error {
		s := c.net.TotalStats()
		if s.PacketsDropped != last.PacketsDropped || s.StreamsRefused != last.StreamsRefused {
			last = s
			return errors.New("nodes still try to reach the other side")
		}
		if n := s.PacketsSent - last.PacketsSent; n < 60 {
			return fmt.Errorf("only %d packets sent since the last attempt to cross", n)
		}
		return nil
	})
}

func (c *cluster) anyLogged(idx []int, s string) bool {
	for _, i := range idx {
		if c.logs[i].contains(s) {
			return true
		}
	}
	return false
}

// Convergence after the joins rides on lossy gossip, and the view must then
// hold while hundreds of lossy probes run: a lost ack alone must not kill.
// In a synctest bubble, as TestClusterConverges and for the same reason: on
// a real clock a starved race build declared members dead that loss had
// not touched ("node-0 has members [node-0 node-1 node-3 node-4]").
func TestClusterConvergesUnderLoss(t *testing.T) {
	testutil.CheckLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := startCluster(t, 5, clusterSpec{seed: 3, drain: time.Minute, faults: func(n *Network) { n.SetLoss(0.2) }})
		testutil.Eventually(t, convergeTimeout, func() error {
			if s := c.net.TotalStats(); s.PacketsSent < 300 {
				return fmt.Errorf("only %d packets sent", s.PacketsSent)
			}
			return c.sees(names(0, 1, 2, 3, 4), c.all()...)
		})
		// Over 300+ packets the loss fraction deviates by about 0.023.
		s := c.net.TotalStats()
		if rate := float64(s.PacketsDropped) / float64(s.PacketsSent); !within(rate, 0.2, 0.08) {
			t.Errorf("dropped %d of %d packets (%.3f), want 0.2±0.08", s.PacketsDropped, s.PacketsSent, rate)
		}
	})
}

// In a synctest bubble, as TestClusterConverges.
func TestClusterConvergesWithDelayAndDuplication(t *testing.T) {
	testutil.CheckLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := startCluster(t, 5, clusterSpec{seed: 4, drain: time.Minute, faults: func(n *Network) {
			n.SetDelay(0, 5*time.Millisecond)
			n.SetDuplicate(0.1)
		}})
		testutil.Eventually(t, convergeTimeout, func() error {
			if s := c.net.TotalStats(); s.PacketsDuplicated < 10 {
				return fmt.Errorf("only %d packets duplicated", s.PacketsDuplicated)
			}
			return c.sees(names(0, 1, 2, 3, 4), c.all()...)
		})
	})
}

// After the whole cluster is shut down every packet is accounted for. In a
// synctest bubble, as TestClusterConverges: convergence under loss on a
// real clock is what a starved race build gets wrong.
func TestClusterCountersBalance(t *testing.T) {
	testutil.CheckLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := startCluster(t, 3, clusterSpec{seed: 5, drain: time.Minute, faults: func(n *Network) {
			n.SetLoss(0.1)
			n.SetDuplicate(0.1)
			n.SetDelay(0, 2*time.Millisecond)
		}})
		testutil.Eventually(t, convergeTimeout, func() error {
			return c.sees(names(0, 1, 2), c.all()...)
		})
		for _, m := range c.nodes {
			_ = m.Shutdown()
		}
		if err := settled(c.net); err != nil {
			t.Error(err)
		}
		s := c.net.TotalStats()
		// net.Pipe writes complete only as the other end reads them.
		if s.StreamBytesSent != s.StreamBytesReceived || s.StreamBytesSent == 0 {
			t.Errorf("stream bytes sent %d, received %d; want equal and non-zero", s.StreamBytesSent, s.StreamBytesReceived)
		}
	})
}
