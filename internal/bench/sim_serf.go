package bench

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/serf/serf"

	"github.com/namecast/namecast/gossip"
)

// SimSerf is P6's peer: serf.Serf instances on the same memberlist
// profile. A registration is a user event; a crash is gone when every
// member has seen the member-failed event.
type SimSerf struct {
	Profile string
	nodes   []*simSerfNode
	wg      sync.WaitGroup
	stop    chan struct{}
}

type simSerfNode struct {
	name string
	s    *serf.Serf
	down bool

	mu      sync.Mutex
	events  map[string]bool // user events and "failed:"+member seen
	changed chan struct{}
}

func (s *SimSerf) start(i int, tr *CountingTransport, join string, logs io.Writer) error {
	if s.stop == nil {
		s.stop = make(chan struct{})
	}
	name := simName(i)
	gc, err := gossip.Profile(s.Profile)
	if err != nil {
		return err
	}
	conf := serf.DefaultConfig()
	conf.NodeName = name
	conf.LogOutput = discard{}
	conf.MemberlistConfig = simMemberlist(gc.Memberlist, name, tr, logs)
	events := make(chan serf.Event, 1024)
	conf.EventCh = events
	sf, err := serf.Create(conf)
	if err != nil {
		return err
	}
	n := &simSerfNode{name: name, s: sf, events: map[string]bool{}, changed: make(chan struct{})}
	s.nodes = append(s.nodes, n)
	s.wg.Add(1)
	go s.consume(n, events)
	if join != "" {
		if _, err := sf.Join([]string{join}, true); err != nil {
			return fmt.Errorf("%s joining %s: %w", name, join, err)
		}
	}
	return nil
}

func (s *SimSerf) consume(n *simSerfNode, events <-chan serf.Event) {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case ev := <-events:
			var keys []string
			switch e := ev.(type) {
			case serf.UserEvent:
				keys = append(keys, e.Name)
			case serf.MemberEvent:
				if e.Type == serf.EventMemberFailed {
					for _, m := range e.Members {
						keys = append(keys, "failed:"+m.Name)
					}
				}
			}
			if len(keys) == 0 {
				continue
			}
			n.mu.Lock()
			for _, k := range keys {
				n.events[k] = true
			}
			close(n.changed)
			n.changed = make(chan struct{})
			n.mu.Unlock()
		}
	}
}

func (s *SimSerf) addr(i int) string {
	m := s.nodes[i].s.Memberlist().LocalNode()
	return m.Address()
}

func (s *SimSerf) aliveSeen(i int) int {
	if n := s.nodes[i].s.NumNodes(); n < len(s.nodes) { // as SimNamecast's
		return n
	}
	n := 0
	for _, m := range s.nodes[i].s.Members() {
		if m.Status == serf.StatusAlive {
			n++
		}
	}
	return n
}

func (s *SimSerf) publish(i int, key string) error {
	return s.nodes[i].s.UserEvent(key, []byte("dubbo://"+s.nodes[i].name), false)
}

func (s *SimSerf) waitEvent(ctx context.Context, n *simSerfNode, key string) bool {
	for {
		n.mu.Lock()
		seen, ch := n.events[key], n.changed
		n.mu.Unlock()
		if seen {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

func (s *SimSerf) watch(ctx context.Context, key string, members []int) <-chan time.Time {
	return arrivals(ctx, members, func(ctx context.Context, i int) bool { return s.waitEvent(ctx, s.nodes[i], key) })
}

func (s *SimSerf) watchGone(ctx context.Context, victim int, members []int) <-chan time.Time {
	key := "failed:" + s.nodes[victim].name
	return arrivals(ctx, members, func(ctx context.Context, i int) bool { return s.waitEvent(ctx, s.nodes[i], key) })
}

func (s *SimSerf) crash(i int) {
	s.nodes[i].down = true
	_ = s.nodes[i].s.Shutdown()
}

func (s *SimSerf) close() {
	for _, n := range s.nodes {
		if !n.down {
			n.down = true
			_ = n.s.Shutdown()
		}
	}
	if s.stop != nil {
		close(s.stop)
	}
	s.wg.Wait()
}
