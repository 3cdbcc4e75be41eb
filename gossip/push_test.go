package gossip

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

func TestPushBudgetBoundsBursts(t *testing.T) {
	b := budget{rate: pushRate, burst: pushBurst}
	now := time.Unix(1000, 0)
	spent := 0
	for b.take(3, now) {
		spent += 3
	}
	if spent > pushBurst || spent < pushBurst-3 {
		t.Fatalf("a burst spent %d packets, want about %d", spent, pushBurst)
	}
	// A tenth of a second later, a tenth of the rate is available again.
	later := now.Add(100 * time.Millisecond)
	if !b.take(pushRate/10-3, later) {
		t.Fatalf("budget did not refill at %d/s", pushRate)
	}
	if b.take(6, later) {
		t.Fatalf("budget refilled more than its rate")
	}
}

// With gossip ticks, probes (memberlist piggybacks queued broadcasts on
// every UDP packet it sends), push/pull and anti-entropy all an hour
// apart, a published op can reach the other members only by the eager
// push: the publisher's to its GossipNodes members, then theirs on first
// apply. That holds for an op over half a packet too (a Dubbo provider
// URL's is ~850 bytes of 1,400), which is not queued for the ticks.
func TestOpsSpreadByEagerPushAlone(t *testing.T) {
	u := "dubbo://10.0.0.7:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider" +
		"&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false&interface=org.apache.dubbo.demo.DemoService" +
		"&methods=sayHello,sayHelloAsync&pid=1007&release=3.3.1&side=provider&timestamp=1735689600000"
	for _, tc := range []struct {
		name string
		rec  routes.Record
	}{
		{"queue", routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b"}}},
		{"dubbo URL over half a packet", routes.Record{URL: &routes.URL{Interface: "org.apache.dubbo.demo.DemoService", Category: "providers", URL: u}}},
	} {
		t.Run(tc.name, func(t *testing.T) { testOpsSpreadByEagerPushAlone(t, tc.rec) })
	}
}

func testOpsSpreadByEagerPushAlone(t *testing.T, rec routes.Record) {
	const n = 4
	var gs []*Gossip
	for i := range n {
		cfg, _ := Profile("local")
		cfg.Table = routes.NewTable(fmt.Sprintf("m%d", i), 1)
		cfg.Memberlist.BindAddr = "127.0.0.1"
		cfg.Memberlist.BindPort = 0
		cfg.Memberlist.GossipInterval = time.Hour
		cfg.Memberlist.ProbeInterval = time.Hour
		cfg.Memberlist.PushPullInterval = time.Hour
		cfg.Memberlist.LogOutput = io.Discard
		cfg.AntiEntropyInterval = time.Hour
		cfg.ReconnectInterval = time.Hour
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Shutdown() })
		gs = append(gs, g)
	}
	// Each joins all the others: with no gossip ticks, nobody would learn
	// of a member it did not join.
	for i, g := range gs {
		for j, h := range gs {
			if i != j {
				if _, err := g.Join([]string{h.LocalAddr()}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, g := range gs {
			if a := g.AliveMembers(); a != n {
				return fmt.Errorf("%s sees %d alive members", g.name, a)
			}
		}
		return nil
	})
	d, ok := gs[0].table.ApplyLocal([]routes.Record{rec}, nil)
	if !ok {
		t.Fatal("ApplyLocal refused a valid record")
	}
	t.Logf("op message: %d bytes, packet %d", len(encode(msgOps, d)), gs[0].cfg.Memberlist.UDPBufferSize)
	gs[0].Publish(d)
	testutil.Eventually(t, 5*time.Second, func() error {
		for _, g := range gs[1:] {
			if _, recs := g.table.Len(); recs != 1 {
				return fmt.Errorf("%s holds %d records, want the one published on m0", g.name, recs)
			}
		}
		return nil
	})
}
