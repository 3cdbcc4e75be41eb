package gossip

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
)

// When a whole cluster starts at once on a loaded host, a member (c) may
// join through one (b) whose own join is still in flight: b has sent the
// cluster its state, listing only itself, and has no answer yet. The two
// learn each other and nobody else; their alive messages are spent on
// each other; when b's answer comes, b learns the cluster and the cluster
// learns b, but nobody learns c except from memberlist's periodic
// push/pull (30 s in profile fast; 90 s at 100 members), so a cluster of
// 100 agent processes took 137 s to form where all but one member had
// formed in ~20 (docs/bench/history.md). c must reach every
// member within a few seconds of b's join. In a bubble, profile fast.
func TestJoinThroughAMemberStillJoiningReachesTheCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(6)
		// memberlist relays an alive message RetransmitMult·⌈log10(N+1)⌉
		// times from each member that learns it: 4 at 9 members, so an
		// ordinary join misses some member about one time in ten (each
		// is missed with probability ~e⁻⁴) until the next periodic
		// push/pull. That is memberlist's, for any joiner; tripled here so
		// that only c's own fate decides the test.
		reliable := func(g *Gossip) { g.cfg.Memberlist.RetransmitMult = 12 }
		gs := spiralCluster(t, net, 4, reliable)
		start := func(name string, prep func(*Gossip)) *Gossip {
			g := startMember(t, net, name, func(cfg *Config) { cfg.Memberlist.RetransmitMult = 12 }, prep)
			gs = append(gs, g)
			return g
		}
		defer func() { stopAll(net, gs) }()
		// b's first push/pull (its join) waits, its state taken, until
		// released; the ones it answers do not.
		release := make(chan struct{})
		var first atomic.Bool
		b := start("b", func(g *Gossip) {
			g.beforeLocalState = func(join bool) {
				if join && first.CompareAndSwap(false, true) {
					<-release
				}
			}
		})
		joined := make(chan error, 1)
		go func() {
			_, err := b.Join([]string{gs[0].LocalAddr()})
			joined <- err
		}()
		synctest.Wait() // b's join is waiting, its member list taken
		c := start("c", nil)
		if _, err := c.Join([]string{b.LocalAddr()}); err != nil {
			t.Fatal(err)
		}
		// Long enough for b's and c's alive messages to be spent on each
		// other (12 sends each, one per 100 ms gossip interval).
		time.Sleep(3 * time.Second)
		close(release)
		if err := <-joined; err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs, "", StatusAlive, len(gs)) })
		took := time.Since(at)
		t.Logf("every member saw all %d alive %v after b's join returned", len(gs), took)
		if took > 5*time.Second {
			t.Fatalf("the member that joined through one still joining took %v to reach the cluster, want within 5 s (memberlist's push/pull: 30 s)", took)
		}
	})
}
