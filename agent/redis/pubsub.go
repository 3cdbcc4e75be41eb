package redis

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/namecast/namecast/agent/redis/resp"
)

// pubsub is who subscribes to what on this agent, as one Redis server
// keeps it: PUBLISH (a client's, or the door's own in feed.go) reaches
// this agent's subscribers. Dubbo's consumers keep one PSUBSCRIBE
// connection each; they hear of changes anywhere in the cluster through
// the door's own publications.
type pubsub struct {
	// subscribers counts the connections in subscribed mode, read
	// without the lock by the table's change hook (feed.go).
	subscribers atomic.Int64
	mu          sync.Mutex
	channels    map[string]map[*conn]struct{}
	patterns    map[string]map[*conn]struct{}
}

func (p *pubsub) init() {
	p.channels = map[string]map[*conn]struct{}{}
	p.patterns = map[string]map[*conn]struct{}{}
}

// subscribedLocked reports whether c is in subscribed mode. Only c's own
// goroutine changes its subscriptions, so it may read them without the
// lock.
func (c *conn) subscribedLocked() bool { return len(c.subs)+len(c.psubs) > 0 }

// heard reports whether anyone subscribes to channel or to a pattern
// matching it.
func (s *Server) heard(channel string) bool {
	s.pubsub.mu.Lock()
	defer s.pubsub.mu.Unlock()
	if len(s.pubsub.channels[channel]) > 0 {
		return true
	}
	for pat := range s.pubsub.patterns {
		if Match(pat, channel) {
			return true
		}
	}
	return false
}

// track counts c in or out of subscribed mode after a change of its
// subscriptions (was: before it). s.pubsub.mu held.
func (s *Server) track(c *conn, was bool) {
	if now := c.subscribedLocked(); now != was {
		if now {
			s.pubsub.subscribers.Add(1)
		} else {
			s.pubsub.subscribers.Add(-1)
		}
	}
}

// publish sends msg on channel to its subscribers and to those of a
// matching pattern, and counts them, as PUBLISH replies.
func (s *Server) publish(channel, msg string) int {
	s.pubsub.mu.Lock()
	var to []*conn
	var frames [][]byte
	if subs := s.pubsub.channels[channel]; len(subs) > 0 {
		f := resp.Array(nil, 3)
		f = resp.Bulk(f, "message")
		f = resp.Bulk(f, channel)
		f = resp.Bulk(f, msg)
		for c := range subs {
			to, frames = append(to, c), append(frames, f)
		}
	}
	for pat, subs := range s.pubsub.patterns {
		if !Match(pat, channel) {
			continue
		}
		f := resp.Array(nil, 4)
		f = resp.Bulk(f, "pmessage")
		f = resp.Bulk(f, pat)
		f = resp.Bulk(f, channel)
		f = resp.Bulk(f, msg)
		for c := range subs {
			to, frames = append(to, c), append(frames, f)
		}
	}
	s.pubsub.mu.Unlock()
	for i, c := range to {
		c.push(frames[i])
	}
	s.counts.messages.Add(uint64(len(to)))
	return len(to)
}

func cmdPublish(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return resp.Int(b, int64(s.publish(string(args[1]), string(args[2]))))
}

func cmdSubscribe(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return s.subscribe(c, args[1:], false, b)
}

func cmdPSubscribe(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return s.subscribe(c, args[1:], true, b)
}

func cmdUnsubscribe(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return s.unsubscribe(c, args[1:], false, b)
}

func cmdPUnsubscribe(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return s.unsubscribe(c, args[1:], true, b)
}

func (s *Server) subscribe(c *conn, names [][]byte, pattern bool, b []byte) []byte {
	kind, mine, all := "subscribe", &c.subs, s.pubsub.channels
	if pattern {
		kind, mine, all = "psubscribe", &c.psubs, s.pubsub.patterns
	}
	s.pubsub.mu.Lock()
	defer s.pubsub.mu.Unlock()
	defer s.track(c, c.subscribedLocked())
	if *mine == nil {
		*mine = map[string]struct{}{}
	}
	for _, n := range names {
		name := string(n)
		if _, ok := (*mine)[name]; !ok {
			if len(c.subs)+len(c.psubs) >= s.cfg.MaxSubscriptions {
				s.counts.refusedSubscriptions.Add(1)
				return resp.Err(b, fmt.Sprintf("ERR namecast: this connection subscribes to %d channels and patterns, its most (redis_max_subscriptions); unsubscribe some or use another connection", s.cfg.MaxSubscriptions))
			}
			(*mine)[name] = struct{}{}
			if all[name] == nil {
				all[name] = map[*conn]struct{}{}
			}
			all[name][c] = struct{}{}
		}
		b = resp.Array(b, 3)
		b = resp.Bulk(b, kind)
		b = resp.Bulk(b, name)
		b = resp.Int(b, int64(len(c.subs)+len(c.psubs)))
	}
	return b
}

func (s *Server) unsubscribe(c *conn, names [][]byte, pattern bool, b []byte) []byte {
	kind, mine, all := "unsubscribe", &c.subs, s.pubsub.channels
	if pattern {
		kind, mine, all = "punsubscribe", &c.psubs, s.pubsub.patterns
	}
	s.pubsub.mu.Lock()
	defer s.pubsub.mu.Unlock()
	defer s.track(c, c.subscribedLocked())
	var list []string
	if len(names) == 0 {
		for n := range *mine {
			list = append(list, n)
		}
		slices.Sort(list)
		if len(list) == 0 {
			b = resp.Array(b, 3)
			b = resp.Bulk(b, kind)
			b = resp.NullBulk(b)
			return resp.Int(b, int64(len(c.subs)+len(c.psubs)))
		}
	} else {
		for _, n := range names {
			list = append(list, string(n))
		}
	}
	for _, name := range list {
		if _, ok := (*mine)[name]; ok {
			delete(*mine, name)
			delete(all[name], c)
			if len(all[name]) == 0 {
				delete(all, name)
			}
		}
		b = resp.Array(b, 3)
		b = resp.Bulk(b, kind)
		b = resp.Bulk(b, name)
		b = resp.Int(b, int64(len(c.subs)+len(c.psubs)))
	}
	return b
}

// unsubscribeAll forgets a connection that ended.
func (s *Server) unsubscribeAll(c *conn) {
	s.pubsub.mu.Lock()
	defer s.pubsub.mu.Unlock()
	defer s.track(c, c.subscribedLocked())
	for name := range c.subs {
		delete(s.pubsub.channels[name], c)
		if len(s.pubsub.channels[name]) == 0 {
			delete(s.pubsub.channels, name)
		}
	}
	for name := range c.psubs {
		delete(s.pubsub.patterns[name], c)
		if len(s.pubsub.patterns[name]) == 0 {
			delete(s.pubsub.patterns, name)
		}
	}
	c.subs, c.psubs = nil, nil
}
