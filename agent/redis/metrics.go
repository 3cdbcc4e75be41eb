package redis

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-metrics"
)

type metricsLabel = metrics.Label

// counts are the door's counters, flushed to go-metrics every 2 s (as
// redis.* in docs/metrics.md): a labelled counter per command would cost
// the hot path an allocation.
type counts struct {
	conns                              atomic.Int64
	refusedConns, protocolErrors       atomic.Uint64
	authFailures, refusedSubscriptions atomic.Uint64
	expired, notifications, messages   atomic.Uint64
	slowSubscribers                    atomic.Uint64

	mu       sync.Mutex
	commands map[string]uint64
	flushed  map[string]uint64
	last     map[string]uint64 // the atomics' values at the last flush
}

func (c *counts) command(name string) {
	c.mu.Lock()
	if c.commands == nil {
		c.commands = map[string]uint64{}
	}
	c.commands[name]++
	c.mu.Unlock()
}

// flush adds what was counted since the last flush to the agent's
// metrics, and sets the gauges.
func (s *Server) flush() {
	m := s.cfg.Metrics
	c := &s.counts
	c.mu.Lock()
	first := c.flushed == nil
	if first {
		c.flushed, c.last = map[string]uint64{}, map[string]uint64{}
	}
	for name, n := range c.commands {
		if d := n - c.flushed[name]; d > 0 {
			m.IncrCounterWithLabels([]string{"redis", "commands"}, float32(d), []metricsLabel{{Name: "command", Value: name}})
			c.flushed[name] = n
		}
	}
	for name, v := range map[string]*atomic.Uint64{
		"refused_connections": &c.refusedConns, "protocol_errors": &c.protocolErrors, "auth_failures": &c.authFailures,
		"refused_subscriptions": &c.refusedSubscriptions, "expired_fields": &c.expired, "notifications": &c.notifications,
		"messages": &c.messages, "slow_subscribers": &c.slowSubscribers,
	} {
		now := v.Load()
		if d := now - c.last[name]; d > 0 || first { // exported at 0 from the start, for rate()
			m.IncrCounter([]string{"redis", name}, float32(d))
			c.last[name] = now
		}
	}
	c.mu.Unlock()
	m.SetGauge([]string{"redis", "connections"}, float32(c.conns.Load()))
	s.holds.mu.Lock()
	held := len(s.held)
	s.holds.mu.Unlock()
	m.SetGauge([]string{"redis", "held_fields"}, float32(held))
}
