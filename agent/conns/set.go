package conns

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
)

// Config bounds a door's connections. Zero bounds bound nothing.
type Config struct {
	// PerIP bounds the connections open at once from one client IP (the
	// address a connection comes from, without its port); 0 or less: no
	// bound. Every client on the agent's own host shares 127.0.0.1.
	PerIP int
	// Total bounds the connections open at once from anywhere; 0 or
	// less: no bound.
	Total int
	// Refused is called for every connection refused for a bound, on the
	// accepting goroutine, before the set closes it: the door's loud
	// failure (its log line, in its words). It must not block. Nil: the
	// connection is closed and nothing is said.
	Refused func(Refusal)
	// Logger gets accept errors (the set retries after them); nil
	// discards.
	Logger *slog.Logger
}

// Refusal is one connection refused for a bound.
type Refusal struct {
	Conn  net.Conn // still open: the set closes it when Refused returns
	IP    string   // the client IP it came from
	PerIP bool     // refused for Config.PerIP (else for Config.Total)
	Max   int      // the bound it would have passed
	// Count is how many connections the set has refused so far, this one
	// included (a door can log the first and then now and again).
	Count int64
}

// Conn is what a door keeps of a connection: its per-connection state
// (usually a pointer), which the set closes at Close.
type Conn interface {
	comparable
	Close() error
}

// Set is a door's accepted connections, each the door's own value C (its
// per-connection state), which Close closes.
type Set[C Conn] struct {
	cfg     Config
	log     *slog.Logger
	ctx     context.Context // done at Close: accept loops stop
	cancel  context.CancelFunc
	wg      sync.WaitGroup // accept loops and serve goroutines
	refused atomic.Int64

	mu     sync.Mutex // guards what follows
	open   map[C]string
	perIP  map[string]int
	lns    []net.Listener
	closed bool
}

// New makes an empty set. It starts nothing.
func New[C Conn](cfg Config) *Set[C] {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Set[C]{cfg: cfg, log: log, ctx: ctx, cancel: cancel, open: map[C]string{}, perIP: map[string]int{}}
}

// ErrClosed is returned by Serve and Listener once Close has begun.
var ErrClosed = errors.New("conns: the door is closed")

// Serve accepts connections on ln until Close, which closes ln, and
// returns at once. For each connection within the bounds it calls open
// (on the accepting goroutine; it must not block) and then serve on a
// goroutine Close waits for; the connection is forgotten, and makes room,
// when serve returns. serve must end the connection, or leave it to a
// goroutine that will. After Close, Serve returns ErrClosed and does not
// take ln.
func (s *Set[C]) Serve(ln net.Listener, open func(net.Conn) C, serve func(C)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.lns = append(s.lns, ln)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		acceptLoop(s.ctx, ln, s.log, func(nc net.Conn) bool {
			c, v := s.admit(nc, open)
			if v != admitted {
				return v == refused
			}
			// The accept loop's own count keeps s.wg above zero, so this
			// Add cannot race Close's Wait.
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.forget(c)
				serve(c)
			}()
			return true
		})
	}()
	return nil
}

// verdict is what admit made of a connection.
type verdict int

const (
	admitted verdict = iota
	refused          // over a bound; closed, and the door told
	closing          // Close has begun; closed
)

// admit lets nc in, as open(nc), if the set is open and nc is within the
// bounds; else it closes nc.
func (s *Set[C]) admit(nc net.Conn, open func(net.Conn) C) (C, verdict) {
	var zero C
	ip := clientIP(nc)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return zero, closing
	}
	if r, over := s.overLocked(nc, ip); over {
		s.mu.Unlock()
		r.Count = s.refused.Add(1)
		if s.cfg.Refused != nil {
			s.cfg.Refused(r)
		}
		nc.Close()
		return zero, refused
	}
	c := open(nc)
	s.open[c] = ip
	s.perIP[ip]++
	s.mu.Unlock()
	return c, admitted
}

// overLocked says whether one more connection from ip passes a bound.
// s.mu held.
func (s *Set[C]) overLocked(nc net.Conn, ip string) (Refusal, bool) {
	if max := s.cfg.PerIP; max > 0 && s.perIP[ip] >= max {
		return Refusal{Conn: nc, IP: ip, PerIP: true, Max: max}, true
	}
	if max := s.cfg.Total; max > 0 && len(s.open) >= max {
		return Refusal{Conn: nc, IP: ip, Max: max}, true
	}
	return Refusal{}, false
}

// forget drops c from the set, making room for another connection from
// its IP.
func (s *Set[C]) forget(c C) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ip, ok := s.open[c]
	if !ok {
		return
	}
	delete(s.open, c)
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
}

// Len is how many connections are open now.
func (s *Set[C]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// All is the connections open now, in no order.
func (s *Set[C]) All() []C {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]C, 0, len(s.open))
	for c := range s.open {
		all = append(all, c)
	}
	return all
}

// Close stops accepting, closes every listener and every connection, and
// waits for the goroutines the set started: the accept loops and every
// serve. It returns the first error of closing a listener. Safe to call
// more than once; a later call waits as well.
func (s *Set[C]) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	lns := s.lns
	s.mu.Unlock()
	s.cancel()
	var err error
	for _, ln := range lns {
		if e := ln.Close(); err == nil {
			err = e
		}
	}
	// No connection is let in now: the set is closed.
	for _, c := range s.All() {
		c.Close()
	}
	s.wg.Wait()
	return err
}

// clientIP is the IP nc comes from: its remote address without the port,
// or the whole address when it has none (an in-memory pipe).
func clientIP(nc net.Conn) string {
	a := nc.RemoteAddr()
	if a == nil {
		return ""
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}
