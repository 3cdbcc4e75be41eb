package chaos_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/routes"
)

// gossipSystem is a chaos.System of bare gossip instances, each with its
// own routes.Table, over one gossiptest.Network: the replication protocol
// without the agent's HTTP listeners, so it runs inside a synctest bubble
// where memberlist's stock timings cost no wall time.
type gossipSystem struct {
	t       testing.TB
	net     *gossiptest.Network
	profile string
	logger  *slog.Logger // nil: discard
	names   []string
	addrs   []string
	nodes   []*gossipNode // nil: down
	inc     uint64        // grows with every start: incarnations
}

type gossipNode struct {
	table *routes.Table
	g     *gossip.Gossip
}

var _ chaos.System = (*gossipSystem)(nil)

// startGossipSystem starts n nodes, each joined to those before it.
// logger, if not nil, gets every node's log with a "node" attribute.
func startGossipSystem(t testing.TB, net *gossiptest.Network, n int, profile string, logger *slog.Logger) *gossipSystem {
	s := &gossipSystem{t: t, net: net, profile: profile, logger: logger, nodes: make([]*gossipNode, n)}
	for i := range n {
		s.names = append(s.names, fmt.Sprintf("node-%d", i))
		s.addrs = append(s.addrs, "")
	}
	for i := range n {
		if err := s.Restart(i); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *gossipSystem) Names() []string              { return s.names }
func (s *gossipSystem) Running(i int) bool           { return s.nodes[i] != nil }
func (s *gossipSystem) Network() *gossiptest.Network { return s.net }

func (s *gossipSystem) Crash(i int) {
	if n := s.nodes[i]; n != nil {
		s.nodes[i] = nil
		_ = n.g.Shutdown()
	}
}

func (s *gossipSystem) Leave(i int) {
	if n := s.nodes[i]; n != nil {
		_ = n.g.Leave(2e9)
		s.Crash(i)
	}
}

// Restart starts node i with a new incarnation and joins it to every
// other running node it can reach. Reaching none (a partition) is fine:
// the others re-join it, or learn it from its gossip, once they can.
func (s *gossipSystem) Restart(i int) error {
	s.Crash(i)
	s.inc++
	cfg, err := gossip.Profile(s.profile)
	if err != nil {
		return err
	}
	cfg.Table = routes.NewTable(s.names[i], s.inc)
	tr := s.net.NewTransport(s.names[i])
	cfg.Memberlist.Transport = tr
	cfg.Memberlist.Label = "chaos"
	if s.logger != nil {
		cfg.Logger = s.logger.With("node", s.names[i])
	}
	g, err := gossip.New(cfg)
	if err != nil {
		return err
	}
	if err := g.Start(); err != nil {
		return err
	}
	s.addrs[i] = tr.Addr()
	var peers []string
	for j, n := range s.nodes {
		if n != nil && j != i {
			peers = append(peers, s.addrs[j])
		}
	}
	if len(peers) > 0 {
		_, _ = g.Join(peers)
	}
	s.nodes[i] = &gossipNode{table: cfg.Table, g: g}
	return nil
}

func (s *gossipSystem) Replicas() []chaos.Replica {
	var out []chaos.Replica
	for i, n := range s.nodes {
		if n != nil {
			out = append(out, chaos.Replica{Name: s.names[i], Table: n.table, Members: n.g.Members})
		}
	}
	return out
}

// Register does what the agent does with a registration: a rule goes to
// the rules origin; a master's registration also withdraws the topics it
// no longer lists.
func (s *gossipSystem) Register(i int, r chaos.Registration) error {
	n := s.nodes[i]
	recs, err := r.Records()
	if err != nil {
		return err
	}
	if r.Rule() {
		if d, ok := n.table.ApplyRules(recs, nil); ok {
			n.g.Publish(d)
		}
		return nil
	}
	var deletes []string
	if r.URL == "" && r.BrokerID == 0 {
		keep := map[string]bool{}
		for _, rec := range recs {
			keep[rec.Key()] = true
		}
		for _, old := range n.table.LocalRecords(routes.QueuePrefix(r.BrokerName)) {
			if !keep[old.Key()] {
				deletes = append(deletes, old.Key())
			}
		}
	}
	if d, ok := n.table.ApplyLocal(recs, deletes); ok {
		n.g.Publish(d)
	}
	return nil
}

func (s *gossipSystem) Unregister(i int, r chaos.Registration) (bool, error) {
	n := s.nodes[i]
	key := r.Key()
	if r.Rule() {
		d, ok := n.table.ApplyRules(nil, []string{key})
		if ok {
			n.g.Publish(d)
		}
		return ok, nil
	}
	if len(n.table.LocalRecords(key)) == 0 {
		return false, nil
	}
	deletes := []string{key}
	if r.URL == "" && r.BrokerID == 0 {
		for _, q := range n.table.LocalRecords(routes.QueuePrefix(r.BrokerName)) {
			deletes = append(deletes, q.Key())
		}
	}
	d, ok := n.table.ApplyLocal(nil, deletes)
	if ok {
		n.g.Publish(d)
	}
	return ok, nil
}

// close stops every node and the network.
func (s *gossipSystem) close() {
	for i := range s.nodes {
		s.Crash(i)
	}
	s.net.Close()
}
