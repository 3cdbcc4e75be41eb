package gossip

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/routes"
)

// A second agent started under a live member's name joins that member. The
// live one must refuse the join and keep its incarnation whether or not the
// joiner answers its ping: the agent's second copy finds the live one too
// and exits at once, so under load the live one's ping went unanswered, it
// took the joiner for a previous run's leftover, merged its join digest and
// raised its own incarnation above the joiner's (cmd/namecast
// TestSecondAgentWithALiveNameIsRefused: 2 of 20 under load). Here the
// joiner's answer is lost on the network, every time. Inside a synctest
// bubble, with the stock LAN timings.
func TestLiveMemberRefusesAJoinUnderItsNameUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(1)
		var nodes []*Gossip
		start := func(name, transport string, inc uint64) *Gossip {
			cfg, _ := Profile("lan")
			cfg.Table = routes.NewTable(name, inc)
			cfg.Memberlist.Transport = net.NewTransport(transport)
			cfg.Memberlist.Label = "dup"
			g, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, g)
			return g
		}
		defer func() {
			for _, g := range nodes {
				_ = g.Shutdown()
			}
			net.Close()
			time.Sleep(time.Minute) // lets memberlist's probe timers end
		}()
		live := start("a", "a", 1)
		b := start("b", "b", 1)
		if _, err := b.Join([]string{live.LocalAddr()}); err != nil {
			t.Fatal(err)
		}
		inc := live.table.LocalInc()

		// Nothing the live member sends reaches the second copy: its ping
		// goes unanswered.
		net.SetLinkLoss("a", "a-copy", 1)
		dup := start("a", "a-copy", 2)
		_, _ = dup.Join([]string{live.LocalAddr()})
		_ = dup.Shutdown() // as the agent does when its join fails

		window := time.NewTimer(10 * time.Second)
		defer window.Stop()
		check := time.NewTicker(100 * time.Millisecond)
		defer check.Stop()
		for {
			if now := live.table.LocalInc(); now != inc {
				t.Fatalf("the live member's incarnation went from %d to %d", inc, now)
			}
			select {
			case <-window.C:
				return
			case <-check.C:
			}
		}
	})
}
