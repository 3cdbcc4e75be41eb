package gossip

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// An agent restarts within a second under the same name, its clock an hour
// behind: its incarnation (the clock in ns) is below the previous run's,
// which its peers still hold, not having seen it die. Before the fix every
// peer kept the old records and refused the new ones as stale for as long
// as the agent lived. Inside a synctest bubble, with the stock LAN timings.
func TestRestartWithClockBehindIsTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(1)
		var nodes []*Gossip
		var saved atomic.Uint64 // what a data dir would keep
		start := func(name string, inc uint64) *Gossip {
			cfg, _ := Profile("lan")
			cfg.Table = routes.NewTable(name, inc)
			cfg.Memberlist.Transport = net.NewTransport(name)
			cfg.Memberlist.Label = "inc"
			cfg.Reincarnated = func(inc uint64) { saved.Store(inc) }
			g, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			if len(nodes) > 0 {
				if _, err := g.Join([]string{nodes[0].LocalAddr()}); err != nil {
					t.Fatal(err)
				}
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
		clock := func() uint64 { return uint64(time.Now().UnixNano()) }
		start("a", clock())
		start("b", clock())
		first := start("c", clock())
		register := func(g *Gossip, topic string) {
			rec := routes.Record{Queue: &routes.Queue{Topic: topic, BrokerName: "bc", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}}
			d, _ := g.table.ApplyLocal([]routes.Record{rec}, nil)
			g.Publish(d)
		}
		register(first, "old")
		holds := func(topic string) error {
			for _, g := range nodes[:2] {
				if got := g.table.Topics(); len(got) != 1 || got[0] != topic {
					return fmt.Errorf("%s serves topics %v, want [%s]", g.name, got, topic)
				}
			}
			return nil
		}
		testutil.Eventually(t, time.Minute, func() error { return holds("old") })

		_ = first.Shutdown()
		time.Sleep(500 * time.Millisecond)
		behind := clock() - uint64(time.Hour)
		again := start("c", behind)
		register(again, "new")
		testutil.Eventually(t, time.Minute, func() error { return holds("new") })
		if inc := again.table.LocalInc(); inc <= first.table.LocalInc() || saved.Load() != inc {
			t.Fatalf("the restarted agent's incarnation %d (saved %d) is not above the previous run's %d",
				inc, saved.Load(), first.table.LocalInc())
		}
	})
}

// Members keep their tags encoded and read only the incarnation from them
// (members.go): the field metaInc decodes must be the tag metaFor writes.
func TestIncarnationIsReadFromEncodedTags(t *testing.T) {
	meta := metaFor(map[string]string{"role": "broker", "http": "127.0.0.1:8500"}, 1733078400123456789)
	if got := metaInc(meta); got != 1733078400123456789 {
		t.Fatalf("metaInc = %d, want the incarnation metaFor encoded", got)
	}
	for _, bad := range [][]byte{nil, []byte("{"), []byte(`{"inc":"x"}`), []byte(`{"inc":7}`)} {
		if got := metaInc(bad); got != 0 {
			t.Fatalf("metaInc(%q) = %d, want 0 (unreadable tags still make a member)", bad, got)
		}
	}
}
