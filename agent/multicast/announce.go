package multicast

import (
	"slices"
	"sync"

	"github.com/namecast/namecast/agent/multicast/mcwire"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// maxPending bounds the changed URLs waiting to be announced; past it, a
// change is dropped (counted): its subscribers learn of it at their next
// subscribe.
const maxPending = 1 << 16

// announcer collects the URL records that changed in the table, from any
// door of any agent (OnChange), for the announce loop.
type announcer struct {
	mu      sync.Mutex
	pending map[string]struct{}
	dropped uint64
	wake    chan struct{}
}

func (a *announcer) init() {
	a.pending, a.wake = map[string]struct{}{}, make(chan struct{}, 1)
}

// changed is the table's OnChange hook: it notes a URL key, no more.
func (a *announcer) changed(key string) {
	if _, _, _, ok := routes.ParseURLKey(key); !ok {
		return
	}
	a.mu.Lock()
	if len(a.pending) < maxPending {
		a.pending[key] = struct{}{}
	} else {
		a.dropped++
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *announcer) take() (map[string]struct{}, uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, d := a.pending, a.dropped
	a.pending, a.dropped = map[string]struct{}{}, 0
	return p, d
}

// announceLoop tells this host's group of every URL that appeared or went
// in the cluster, as a Dubbo registry on the group would have: "register
// <url>" or "unregister <url>", multicast with TTL 0. What the host's
// processes registered through the door themselves is left out: they
// multicast it to the group already. The URL's state is read when sent,
// so a change followed by its undo announces the outcome only.
func (s *Server) announceLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.ann.wake:
		}
		keys, dropped := s.ann.take()
		if dropped > 0 {
			s.stats.add("announce_dropped", dropped)
		}
		lists := map[[2]string][]string{}
		for key := range keys {
			iface, cat, raw, _ := routes.ParseURLKey(key)
			list, ok := lists[[2]string{iface, cat}]
			if !ok {
				list = s.table.URLs(iface, cat)
				lists[[2]string{iface, cat}] = list
			}
			_, present := slices.BinarySearch(list, raw)
			if present && s.holds(key) {
				continue
			}
			s.announce(present, raw)
		}
	}
}

func (s *Server) announce(present bool, raw string) {
	u, err := dubbo.Parse(raw)
	if err != nil {
		return
	}
	verb := mcwire.Unregister
	if present {
		verb = mcwire.Register
	}
	if !mcwire.Fits(verb, u) {
		s.stats.incr("too_long", "", "")
		return
	}
	s.sent("announced", s.out.multicast(mcwire.Format(verb, u)))
}
