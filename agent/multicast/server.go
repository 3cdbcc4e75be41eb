package multicast

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/multicast/mcwire"
	"github.com/namecast/namecast/routes"
)

const (
	// DefaultProbe is how often held providers are checked.
	DefaultProbe = 10 * time.Second
	// DefaultMaxPerSender bounds the registrations held for one address.
	DefaultMaxPerSender = 4096
	// maxDatagram is the read buffer: UDP's largest payload, so that a
	// datagram past Dubbo's receive buffer is seen whole and refused
	// rather than read cut (mcwire.ErrCut).
	maxDatagram = 65536
	// localEvery bounds how often a datagram from an address not known to
	// be this host's re-lists the host's addresses.
	localEvery = 5 * time.Second
)

// Config is what a Server is built from. Host is required.
type Config struct {
	Host host.Host
	// Probe is the liveness check's period (DefaultProbe when 0).
	Probe time.Duration
	// MaxPerSender bounds the registrations held for one sending address
	// (DefaultMaxPerSender when 0).
	MaxPerSender int
	Logger       *slog.Logger
	Metrics      *metrics.Metrics
	// Dial connects to a provider's port for the liveness check; nil: TCP.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// LocalAddrs lists this host's addresses, which the door takes
	// registrations and subscriptions from; nil: every interface's.
	LocalAddrs func() ([]netip.Addr, error)
}

// Server is the multicast door of one agent.
type Server struct {
	cfg   Config
	host  host.Host
	table *routes.Table
	log   *slog.Logger
	socks *Sockets
	out   sender

	mu       sync.Mutex
	held     map[string]*holding // by record key
	bySender map[netip.Addr]int

	// The host's addresses, read by the receive loop only.
	local   map[netip.Addr]bool
	localAt time.Time

	ann   announcer
	stats stats

	badLog, refusedLog, sendLog doorkit.NowAndAgain

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// sender sends the door's datagrams: the group's on the host, or one
// address's.
type sender interface {
	multicast(b []byte) error
	unicast(b []byte, to netip.AddrPort) error
}

func (s *Sockets) multicast(b []byte) error {
	_, err := s.send.WriteToUDPAddrPort(b, s.group)
	return err
}

func (s *Sockets) unicast(b []byte, to netip.AddrPort) error {
	_, err := s.send.WriteToUDPAddrPort(b, to)
	return err
}

// NewServer makes the door; it starts nothing.
func NewServer(cfg Config) *Server {
	if cfg.Probe <= 0 {
		cfg.Probe = DefaultProbe
	}
	if cfg.MaxPerSender <= 0 {
		cfg.MaxPerSender = DefaultMaxPerSender
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Dial == nil {
		cfg.Dial = (&net.Dialer{}).DialContext
	}
	if cfg.LocalAddrs == nil {
		cfg.LocalAddrs = interfaceAddrs
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, host: cfg.Host, table: cfg.Host.Table(), log: cfg.Logger, held: map[string]*holding{},
		bySender: map[netip.Addr]int{}, ctx: ctx, cancel: cancel}
	s.ann.init()
	s.stats.init(cfg.Metrics)
	return s
}

// Serve takes back the registrations held before a restart, then serves
// socks (which the door then owns): the receive loop, the announcer and
// the liveness check run until Close.
func (s *Server) Serve(socks *Sockets) {
	s.socks, s.out = socks, socks
	s.start()
	s.wg.Add(1)
	go s.receive()
	s.log.Info("multicast door joined its group", "group", socks.group.String(), "interface", socks.ifName)
}

// start is Serve without sockets (tests hand in a sender).
func (s *Server) start() {
	s.restore()
	s.table.OnChange(s.ann.changed)
	s.wg.Add(2)
	go s.announceLoop()
	go s.probeLoop()
}

// Close stops the door and waits for its goroutines; it withdraws
// nothing (doorkit's contract). Safe more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.cancel()
		if s.socks != nil {
			err = s.socks.Close()
		}
		s.wg.Wait()
	})
	return err
}

// receive reads the group's datagrams until the sockets close.
func (s *Server) receive() {
	defer s.wg.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := s.socks.recv.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.ctx.Err() != nil {
				return
			}
			s.log.Warn("multicast door: reading the group failed", "err", err)
			continue
		}
		s.handle(buf[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))
	}
}

// handle acts on one datagram from from.
func (s *Server) handle(b []byte, from netip.AddrPort) {
	if s.socks != nil && from.Port() == s.socks.sendPort() && s.isLocal(from.Addr()) {
		return // our own answer or announcement, looped back
	}
	m, err := mcwire.Parse(b)
	if err != nil {
		s.bad(from, err)
		return
	}
	s.stats.datagram(m.Verb)
	if m.Verb == mcwire.Unsubscribe {
		return // Dubbo's receivers ignore it too
	}
	if !s.isLocal(from.Addr()) {
		// Another host's process: its own agent serves it.
		s.stats.incr("ignored", "why", "elsewhere")
		return
	}
	switch m.Verb {
	case mcwire.Register:
		s.register(m.URL, from.Addr())
	case mcwire.Unregister:
		s.unregister(m.URL)
	case mcwire.Subscribe:
		s.answer(m.URL, from)
	}
}

// bad counts a refused datagram and says so, at most once a while.
func (s *Server) bad(from netip.AddrPort, err error) {
	why := "other"
	switch {
	case errors.Is(err, mcwire.ErrVerb):
		why = "verb"
	case errors.Is(err, mcwire.ErrCut):
		why = "cut"
	case errors.Is(err, mcwire.ErrURL):
		why = "url"
	case errors.Is(err, errRecord):
		why = "record"
	}
	s.stats.incr("bad", "why", why)
	if s.badLog.Allow() {
		s.log.Warn("multicast door: a datagram was dropped (counted in namecast_multicast_bad; said at most every 10 s)", "from", from.String(), "err", err)
	}
}

// isLocal reports whether addr is this host's: loopback or one of its
// interfaces' addresses (listed again at most every localEvery).
func (s *Server) isLocal(addr netip.Addr) bool {
	if addr.IsLoopback() || s.local[addr] {
		return true
	}
	if now := time.Now(); s.local == nil || now.Sub(s.localAt) >= localEvery {
		s.localAt = now
		if as, err := s.cfg.LocalAddrs(); err == nil {
			s.local = map[netip.Addr]bool{}
			for _, a := range as {
				s.local[a] = true
			}
		}
		return s.local[addr]
	}
	return false
}

func interfaceAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out, nil
}
