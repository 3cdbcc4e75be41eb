package gossip

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// quietMember starts a Gossip on net whose periodic work (probes, gossip,
// push/pull, anti-entropy) is an hour apart, so a hundred of them idle on
// two cores: only what a test does moves.
func quietMember(t *testing.T, net *gossiptest.Network, name string) *Gossip {
	t.Helper()
	cfg, _ := Profile("local")
	cfg.Table = routes.NewTable(name, 1)
	cfg.Memberlist.Transport = net.NewTransport(name)
	cfg.Memberlist.GossipInterval = time.Hour
	cfg.Memberlist.ProbeInterval = time.Hour
	cfg.Memberlist.PushPullInterval = time.Hour
	cfg.Memberlist.TCPTimeout = 10 * time.Second
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
	return g
}

// Answers were buffered 64 deep and dropped past that, so `namecast keys
// list` on a larger cluster reported members as silent at random and an
// operator could never confirm a key rotation. All 100 must be counted.
func TestQueryCountsEveryAnswer(t *testing.T) {
	const n = 100
	net := gossiptest.NewNetwork(1)
	t.Cleanup(net.Close)
	var gs []*Gossip
	for i := range n {
		g := quietMember(t, net, fmt.Sprintf("m%03d", i))
		g.HandleQuery("echo", func(p []byte) ([]byte, error) { return append([]byte(g.name+":"), p...), nil })
		gs = append(gs, g)
	}
	for _, g := range gs[1:] {
		if _, err := g.Join([]string{gs[0].LocalAddr()}); err != nil {
			t.Fatalf("%s joining m000: %v", g.name, err)
		}
	}
	testutil.Eventually(t, 30*time.Second, func() error {
		if a := gs[0].AliveMembers(); a != n {
			return fmt.Errorf("m000 sees %d alive members, want %d", a, n)
		}
		return nil
	})
	for try := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		answers := gs[0].Query(ctx, "echo", []byte("hi"))
		cancel()
		if len(answers) != n {
			t.Fatalf("try %d: %d of %d members answered", try, len(answers), n)
		}
		for _, g := range gs {
			if a := answers[g.name]; a.Error != "" || string(a.Payload) != g.name+":hi" {
				t.Fatalf("try %d: %s answered %+v", try, g.name, a)
			}
		}
	}
}

// QuerySome asks only as many members as it is told, and returns once
// they answered.
func TestQuerySomeAsksAFew(t *testing.T) {
	net := gossiptest.NewNetwork(1)
	t.Cleanup(net.Close)
	var gs []*Gossip
	for i := range 6 {
		g := quietMember(t, net, fmt.Sprintf("m%d", i))
		g.HandleQuery("echo", func(p []byte) ([]byte, error) { return p, nil })
		gs = append(gs, g)
	}
	for _, g := range gs[1:] {
		if _, err := g.Join([]string{gs[0].LocalAddr()}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if a := gs[0].AliveMembers(); a != len(gs) {
			return fmt.Errorf("%d alive", a)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := gs[0].QuerySome(ctx, "echo", []byte("x"), 2)
	if len(got) != 3 { // the two asked, and us
		t.Fatalf("answers from %d members, want 3: %v", len(got), got)
	}
	for from, a := range got {
		if a.Error != "" || string(a.Payload) != "x" {
			t.Errorf("%s answered %+v", from, a)
		}
	}
}
