package dns

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"
	miekg "github.com/miekg/dns"

	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/doorkit"
)

// The bounds on what a client can make the door hold (miekg/dns's
// server defaults, which Consul's uses): a TCP connection is closed when
// its first query takes longer than tcpFirstRead, when it is idle for
// tcpIdle, and after tcpMaxQueries queries.
const (
	tcpFirstRead  = 2 * time.Second
	tcpIdle       = 8 * time.Second
	tcpWrite      = 2 * time.Second
	tcpMaxQueries = 128
	// DefaultMaxConns bounds the TCP connections open at once.
	DefaultMaxConns = 512
	// DefaultUDPWorkers is how many goroutines read and answer UDP queries:
	// a flood of them waits in the socket's buffer (and is dropped there)
	// instead of growing goroutines.
	DefaultUDPWorkers = 4
)

// ServerConfig is what a Server is built from. Catalog is required.
type ServerConfig struct {
	Answer  Config
	Catalog Catalog
	// MaxConns bounds the TCP connections open at once; 0:
	// DefaultMaxConns, negative: none.
	MaxConns int
	// UDPWorkers read the UDP socket; 0: DefaultUDPWorkers.
	UDPWorkers int
	Logger     *slog.Logger
	Metrics    *metrics.Metrics
}

// Server answers DNS queries over UDP and TCP.
type Server struct {
	cfg      ServerConfig
	ans      answerer
	log      *slog.Logger
	conns    *conns.Set[net.Conn]
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stats    stats
	warn     doorkit.NowAndAgain // reads and answers that fail
	refusals doorkit.Refusals

	mu     sync.Mutex
	tcp    net.Listener
	udp    net.PacketConn
	closed bool
}

// NewServer makes a Server from cfg; it starts nothing.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("dns: no catalog")
	}
	if cfg.Answer.Domain == "" {
		cfg.Answer.Domain = DefaultDomain
	}
	cfg.Answer.Domain = miekg.Fqdn(lowerASCII(cfg.Answer.Domain))
	if cfg.Answer.Datacenter == "" {
		cfg.Answer.Datacenter = DefaultDatacenter
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.UDPWorkers <= 0 {
		cfg.UDPWorkers = DefaultUDPWorkers
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, ans: answerer{cfg: cfg.Answer, cat: cfg.Catalog}, log: log, ctx: ctx, cancel: cancel}
	s.stats.init()
	s.refusals = doorkit.Refusals{Counter: s.stats.refused, Log: log, Say: func(conns.Refusal) string {
		return "dns: TCP connection refused: the door's bound on open connections is reached"
	}}
	s.conns = conns.New[net.Conn](conns.Config{Total: cfg.MaxConns, Refused: s.refusals.Refused, Logger: log})
	return s, nil
}

// Serve answers on tcp and udp (either may be nil), which the Server then
// owns, and returns at once.
func (s *Server) Serve(tcp net.Listener, udp net.PacketConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return conns.ErrClosed
	}
	s.tcp, s.udp = tcp, udp
	if tcp != nil {
		if err := s.conns.Serve(tcp, func(c net.Conn) net.Conn { return c }, s.serveTCP); err != nil {
			return err
		}
	}
	if udp != nil {
		for range s.cfg.UDPWorkers {
			s.wg.Go(func() { s.serveUDP(udp) })
		}
	}
	s.wg.Go(func() { doorkit.Every(s.ctx, doorkit.FlushEvery, func(time.Time) { s.flushMetrics() }) })
	return nil
}

// Close stops answering, closes the listeners and every connection, and
// waits for the door's goroutines. Safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	udp := s.udp
	s.mu.Unlock()
	s.cancel()
	err := s.conns.Close()
	if udp != nil {
		err = errors.Join(err, udp.Close())
	}
	s.wg.Wait()
	s.flushMetrics()
	return err
}

// Addrs are where the door listens: "dns" over TCP and "dns-udp".
func (s *Server) Addrs() []doorkit.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []doorkit.Addr
	if s.tcp != nil {
		out = append(out, doorkit.Addr{Name: "dns", Addr: s.tcp.Addr().String()})
	}
	if s.udp != nil {
		out = append(out, doorkit.Addr{Name: "dns-udp", Addr: s.udp.LocalAddr().String()})
	}
	return out
}

// serveUDP answers datagrams read from pc until it is closed.
func (s *Server) serveUDP(pc net.PacketConn) {
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			if s.warn.Allow() {
				s.log.Warn("dns: reading a UDP query", "err", err)
			}
			continue
		}
		if out := s.reply(buf[:n], false); out != nil {
			pc.WriteTo(out, from)
		}
	}
}

// serveTCP answers the length-prefixed queries of one connection.
func (s *Server) serveTCP(c net.Conn) {
	defer c.Close()
	var lenBuf [2]byte
	var buf []byte
	for i := range tcpMaxQueries {
		wait := tcpIdle
		if i == 0 {
			wait = tcpFirstRead
		}
		c.SetReadDeadline(time.Now().Add(wait))
		if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(lenBuf[:]))
		if n == 0 {
			return
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		if _, err := io.ReadFull(c, buf[:n]); err != nil {
			return
		}
		out := s.reply(buf[:n], true)
		if out == nil {
			continue
		}
		c.SetWriteDeadline(time.Now().Add(tcpWrite))
		frame := make([]byte, 2+len(out))
		binary.BigEndian.PutUint16(frame, uint16(len(out)))
		copy(frame[2:], out)
		if _, err := c.Write(frame); err != nil {
			return
		}
	}
}

// reply is the packed reply to the query in b, nil for none.
func (s *Server) reply(b []byte, tcp bool) []byte {
	start := time.Now()
	req, m, ok := decode(b)
	if !ok {
		s.stats.count(0, -1, start)
		return nil
	}
	qtype := uint16(0)
	if req != nil {
		qtype = req.Question[0].Qtype
		m = s.ans.answer(req, tcp)
	}
	out, err := m.Pack()
	if err != nil {
		m = refusal(m.Id, 0, m.Opcode, miekg.RcodeServerFailure)
		out, _ = m.Pack()
		if s.warn.Allow() {
			s.log.Warn("dns: packing a reply", "err", err)
		}
	}
	s.stats.count(qtype, m.Rcode, start)
	return out
}

// lowerASCII lower-cases ASCII letters, as DNS compares names.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
