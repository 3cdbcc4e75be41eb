package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// SimNamecast is P6's namecast: bare gossip.Gossip instances, each with its
// own routes.Table, the replication protocol without the agent's HTTP and
// RocketMQ listeners (which P1-P5 measure on real sockets).
type SimNamecast struct {
	Profile string
	nodes   []*simNC
}

type simNC struct {
	name  string
	table *routes.Table
	g     *gossip.Gossip
	down  bool
}

func (s *SimNamecast) start(i int, tr *CountingTransport, join string, logs io.Writer) error {
	name := simName(i)
	cfg, err := gossip.Profile(s.Profile)
	if err != nil {
		return err
	}
	cfg.Table = routes.NewTable(name, 1)
	cfg.Memberlist = simMemberlist(cfg.Memberlist, name, tr, logs)
	cfg.Logger = slog.New(slog.DiscardHandler)
	g, err := gossip.New(cfg)
	if err != nil {
		return err
	}
	if err := g.Start(); err != nil {
		return err
	}
	s.nodes = append(s.nodes, &simNC{name: name, table: cfg.Table, g: g})
	if join != "" {
		if _, err := g.Join([]string{join}); err != nil {
			return fmt.Errorf("%s joining %s: %w", name, join, err)
		}
	}
	return nil
}

func (s *SimNamecast) addr(i int) string { return s.nodes[i].g.LocalAddr() }

func (s *SimNamecast) aliveSeen(i int) int {
	// Members copies every member's tags: at thousands of members,
	// polled through formation, that was a visible share of the run, so
	// the cheap count (alive or suspect) answers until it is complete.
	if n := s.nodes[i].g.AliveMembers(); n < len(s.nodes) {
		return n
	}
	n := 0
	for _, m := range s.nodes[i].g.Members() {
		if m.Status == gossip.StatusAlive {
			n++
		}
	}
	return n
}

// publish registers one URL under interface key, as a provider would.
func (s *SimNamecast) publish(i int, key string) error {
	n := s.nodes[i]
	rec := routes.Record{URL: &routes.URL{Interface: key, Category: "providers", URL: "dubbo://" + n.name + "/" + key}}
	d, ok := n.table.ApplyLocal([]routes.Record{rec}, nil)
	if !ok {
		return fmt.Errorf("%s: registering %s changed nothing", n.name, key)
	}
	n.g.Publish(d)
	return nil
}

func (s *SimNamecast) waitTable(ctx context.Context, t *routes.Table, cond func() bool) bool {
	for {
		idx := t.Index()
		if cond() {
			return true
		}
		t.Wait(ctx, idx)
		if ctx.Err() != nil {
			return false
		}
	}
}

func (s *SimNamecast) watch(ctx context.Context, key string, members []int) <-chan time.Time {
	return arrivals(ctx, members, func(ctx context.Context, i int) bool {
		t := s.nodes[i].table
		return s.waitTable(ctx, t, func() bool { return len(t.URLs(key, "")) > 0 })
	})
}

// watchGone waits until the victim's registrations are gone, which is
// when namecast drops a crashed member's routes.
func (s *SimNamecast) watchGone(ctx context.Context, victim int, members []int) <-chan time.Time {
	v := s.nodes[victim].name
	return arrivals(ctx, members, func(ctx context.Context, i int) bool {
		t := s.nodes[i].table
		return s.waitTable(ctx, t, func() bool { _, ok := t.Entry(v); return !ok })
	})
}

func (s *SimNamecast) crash(i int) {
	s.nodes[i].down = true
	_ = s.nodes[i].g.Shutdown()
}

func (s *SimNamecast) close() {
	for _, n := range s.nodes {
		if !n.down {
			n.down = true
			_ = n.g.Shutdown()
		}
	}
}
