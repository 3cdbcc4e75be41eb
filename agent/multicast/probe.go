package multicast

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/dubbo"
)

const (
	// probeTimeout bounds one connect of the liveness check.
	probeTimeout = time.Second
	// probeRetry is Dubbo's pause between the two connects.
	probeRetry = 100 * time.Millisecond
	// probeParallel bounds the connects in flight.
	probeParallel = 8
)

// probeLoop withdraws, every Probe, each held provider whose port refuses
// two TCP connects probeRetry apart: what Dubbo's MulticastRegistry
// clean() does, there only on an admin node that subscribed to
// interface=*, and then by multicasting an unregister everyone must
// hear. Here the agent beside the provider does it, and the withdrawal
// reaches every agent as any other.
func (s *Server) probeLoop() {
	defer s.wg.Done()
	doorkit.Every(s.ctx, s.cfg.Probe, func(time.Time) { s.probeAll() })
}

func (s *Server) probeAll() {
	type target struct{ key, url, addr string }
	var ts []target
	s.mu.Lock()
	for key, h := range s.held {
		if probed(h.url) {
			ts = append(ts, target{key, h.url.String(), net.JoinHostPort(h.url.Host(), strconv.Itoa(h.url.Port()))})
		}
	}
	s.mu.Unlock()
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for _, t := range ts {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if s.alive(t.addr) || s.ctx.Err() != nil {
				return
			}
			if s.withdraw(t.key, t.url) {
				s.stats.incr("withdrawn", "", "")
				s.log.Info("multicast door: withdrew a provider whose port refuses connections", "url", clip(t.url), "addr", t.addr)
			}
		}()
	}
	wg.Wait()
}

// probed is Dubbo's isExpired precondition: dynamic, with a port, and
// not a consumer, route or override URL.
func probed(u dubbo.URL) bool {
	switch u.Protocol() {
	case "consumer", "route", "override", "empty":
		return false
	}
	return u.Dynamic() && u.Port() > 0
}

// alive connects twice, probeRetry apart, as Dubbo does; one success is
// enough.
func (s *Server) alive(addr string) bool {
	for i := range 2 {
		if i > 0 {
			select {
			case <-s.ctx.Done():
				return true
			case <-time.After(probeRetry):
			}
		}
		ctx, cancel := context.WithTimeout(s.ctx, probeTimeout)
		c, err := s.cfg.Dial(ctx, "tcp", addr)
		cancel()
		if err == nil {
			c.Close()
			return true
		}
	}
	return false
}
