package nacos

import (
	"context"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
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

// holder names who holds an ephemeral record on this agent: a gRPC
// connection ("grpc:" id) or a 1.x HTTP registration kept by beats
// ("beat:" instance identity). A record is withdrawn when its last holder
// lets go, never earlier.
type holder string

func grpcHolder(id string) holder { return holder("grpc:" + id) }

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
// grace.
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
	time.AfterFunc(s.cfg.Grace, func() { s.expire(ci.id) })
}

// expire withdraws what a gone client held.
func (s *Server) expire(id string) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	c := s.clients[id]
	if c == nil || s.closed {
		s.mu.Unlock()
		return
	}
	delete(s.clients, id)
	var drop []string
	for _, key := range c.insts {
		if s.releaseLocked(grpcHolder(id), key) {
			drop = append(drop, key)
		}
	}
	s.mu.Unlock()
	if len(drop) > 0 {
		s.reg.Apply(nil, drop)
		s.log.Info("nacos client gone: its instances withdrawn", "conn", id, "instances", len(drop))
	}
}

// holdLocked adds h as a holder of rec and reports whether rec is new to
// this agent (the caller applies it). s.mu held.
func (s *Server) holdLocked(h holder, rec routes.Record) bool {
	key := rec.Key()
	m := s.holders[key]
	if m == nil {
		m = map[holder]routes.Record{}
		s.holders[key] = m
	}
	m[h] = rec
	return len(m) == 1
}

// releaseLocked drops h as a holder of key and reports whether it was the
// last (the caller withdraws the record). s.mu held.
func (s *Server) releaseLocked(h holder, key string) bool {
	m := s.holders[key]
	if _, ok := m[h]; !ok {
		return false
	}
	delete(m, h)
	if len(m) == 0 {
		delete(s.holders, key)
		return true
	}
	return false
}

// withdrawAll withdraws every ephemeral record the door holds (Close).
func (s *Server) withdrawAll() {
	s.mu.Lock()
	keys := make([]string, 0, len(s.holders))
	for k := range s.holders {
		keys = append(keys, k)
	}
	s.holders = map[string]map[holder]routes.Record{}
	s.clients = map[string]*client{}
	s.mu.Unlock()
	if len(keys) > 0 {
		s.reg.Apply(nil, keys)
	}
}
