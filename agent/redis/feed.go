package redis

import (
	"strings"
	"sync"

	"github.com/namecast/namecast/routes"
)

// feed turns changes of the registry into what Dubbo's RedisRegistry
// publishes: "register" or "unregister" on the changed URL's key, to this
// agent's subscribers. A change a client of this door made itself (HSET,
// HDEL, DEL) is not published by the door: its client publishes it, as
// Dubbo does after each write. Every other change is: a URL registered or
// withdrawn through another door or on another agent, a field that
// expired, an agent that died.
type feed struct {
	mu      sync.Mutex
	muted   map[string]int // keys a client command is changing now
	pending map[string]struct{}
	wake    chan struct{}
}

func (f *feed) init() {
	f.muted = map[string]int{}
	f.pending = map[string]struct{}{}
	f.wake = make(chan struct{}, 1)
}

// mute marks the keys a command of this door's client is about to change,
// until unmute: the table's change of them is the client's to publish.
func (s *Server) mute(puts []routes.Record, dels []string) {
	s.feed.mu.Lock()
	for _, r := range puts {
		s.feed.muted[r.Key()]++
	}
	for _, k := range dels {
		s.feed.muted[k]++
	}
	s.feed.mu.Unlock()
}

func (s *Server) unmute(puts []routes.Record, dels []string) {
	s.feed.mu.Lock()
	dec := func(k string) {
		if s.feed.muted[k]--; s.feed.muted[k] <= 0 {
			delete(s.feed.muted, k)
		}
	}
	for _, r := range puts {
		dec(r.Key())
	}
	for _, k := range dels {
		dec(k)
	}
	s.feed.mu.Unlock()
}

// noteChange is the table's OnChange: it runs with the table locked, so
// it only notes the key and wakes feedLoop.
func (s *Server) noteChange(key string) {
	if s.pubsub.subscribers.Load() == 0 || !strings.HasPrefix(key, routes.EveryURL) {
		return // nobody to tell: a change costs the door nothing
	}
	s.feed.mu.Lock()
	if s.feed.muted[key] == 0 {
		s.feed.pending[key] = struct{}{}
	}
	s.feed.mu.Unlock()
	select {
	case s.feed.wake <- struct{}{}:
	default:
	}
}

// feedLoop publishes the noted changes: "register" on a key whose URL is
// now in the registry, "unregister" on one whose URL is gone. Each key of
// a batch with someone to hear it is read once, however many of its URLs
// changed.
func (s *Server) feedLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.feed.wake:
		}
		s.feed.mu.Lock()
		keys := s.feed.pending
		s.feed.pending = map[string]struct{}{}
		s.feed.mu.Unlock()
		byKey := map[string][]string{} // Redis key -> changed URLs
		for k := range keys {
			iface, category, url, ok := routes.ParseURLKey(k)
			if ok && component(iface) && component(category) {
				rk := keyOf(iface, category)
				byKey[rk] = append(byKey[rk], url)
			}
		}
		for rk, urls := range byKey {
			if !s.heard(rk) {
				continue
			}
			iface, category, _ := parseKey(rk)
			now := map[string]bool{}
			for _, u := range s.table.URLs(iface, category) {
				now[u] = true
			}
			for _, u := range urls {
				msg := "unregister"
				if now[u] {
					msg = "register"
				}
				s.publish(rk, msg)
				s.counts.notifications.Add(1)
			}
		}
	}
}
