package nacos

import (
	"context"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// client is one set-up gRPC connection and what it holds: its ephemeral
// instances (record keys it holds), its subscriptions and config listens.
type client struct {
	id      string
	remote  string
	st      *stream
	labels  map[string]string
	gone    bool                     // its bi-stream ended; withdrawn after the grace
	insts   map[string]string        // instance identity -> record key held
	subs    map[string]*subscription // subscription key -> subscription
	listens map[string]configID      // config key -> config
}

// setUp registers ci's bi-stream: from now on its requests are served and
// its pushes go out on st.
func (s *Server) setUp(ci *connInfo, st *stream, req nacoswire.ConnectionSetupRequest) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if _, dup := s.clients[ci.id]; dup {
		return false
	}
	s.clients[ci.id] = &client{id: ci.id, remote: ci.remote, st: st, labels: req.Labels,
		insts: map[string]string{}, subs: map[string]*subscription{}, listens: map[string]configID{}}
	s.log.Debug("nacos client set up", "conn", ci.id, "version", req.ClientVersion)
	close(s.setupSignal)
	s.setupSignal = make(chan struct{})
	return true
}

// awaitClient returns ci's client, waiting up to SetupWait for its
// bi-stream setup: the Go client sends its first request 100 ms after the
// setup and a loaded agent may read them in either order.
func (s *Server) awaitClient(ctx context.Context, ci *connInfo) *client {
	deadline := time.NewTimer(s.cfg.SetupWait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		c, sig := s.clients[ci.id], s.setupSignal
		s.mu.Unlock()
		if c != nil {
			if c.gone {
				return nil
			}
			return c
		}
		select {
		case <-sig:
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// streamEnded is called when ci's bi-stream ends: the client process died
// or closed. Its subscriptions and listens end now; its instances after the
// grace, unless another holder keeps them. Its lease's deadline says so,
// so an agent restarted meanwhile withdraws them no later.
func (s *Server) streamEnded(ci *connInfo) {
	s.mu.Lock()
	c := s.clients[ci.id]
	if c == nil || s.closed {
		s.mu.Unlock()
		return
	}
	c.gone = true
	c.subs, c.listens = nil, nil
	s.mu.Unlock()
	s.writeMu.Lock()
	if err := s.renew(grpcHolder(ci.id), time.Now().Add(s.cfg.Grace)); err != nil {
		s.log.Warn("saving a closed connection's deadline failed; a restart may keep its instances a grace longer", "conn", ci.id, "err", err)
	}
	s.writeMu.Unlock()
	time.AfterFunc(s.cfg.Grace, func() { s.expire(ci.id) })
}

// expire withdraws what a gone client held. When the data dir cannot save
// the lease's removal it withdraws nothing (a restart would bring the
// instances back) and tries again a second later.
func (s *Server) expire(id string) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	c := s.clients[id]
	if c == nil || s.closed {
		s.mu.Unlock()
		return
	}
	n := len(c.insts)
	s.mu.Unlock()
	if _, err := s.letGo(grpcHolder(id), true); err != nil {
		s.log.Error("withdrawing a closed connection's instances failed: the data dir cannot save it; retrying", "conn", id, "err", err)
		time.AfterFunc(time.Second, func() { s.expire(id) })
		return
	}
	s.mu.Lock()
	delete(s.clients, id)
	s.mu.Unlock()
	if n > 0 {
		s.log.Info("nacos client gone: its instances withdrawn unless another holder keeps them", "conn", id, "instances", n)
	}
}
