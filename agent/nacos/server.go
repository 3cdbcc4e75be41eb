package nacos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/routes"
)

// Defaults of Config's zero fields.
const (
	DefaultGrace        = 5 * time.Second // the ZooKeeper door's
	DefaultMaxConns     = 10000
	DefaultSetupWait    = 2 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	// GRPCPortOffset is how far above the HTTP port Nacos 2.x clients look
	// for gRPC (com.alibaba.nacos.api.common.Constants.SDK_GRPC_PORT_DEFAULT_OFFSET).
	GRPCPortOffset = 1000
	// BeatTimeout is how long an instance registered over the 1.x HTTP API
	// lives without a beat: Nacos' ipDeleteTimeout.
	BeatTimeout = 30 * time.Second
	// BeatInterval is the beat period the HTTP API tells clients to use.
	BeatInterval = 5 * time.Second
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// Addr is the HTTP address (host:port, 8848 in Nacos); gRPC listens on
	// the same host at port+1000. Port 0 picks free ports for both (then
	// they are not 1000 apart: tests only).
	Addr string
	// Grace bounds how long a client's ephemeral instances outlive its
	// connection: a live client reconnects and re-registers within it.
	Grace time.Duration
	// SetupWait bounds how long a request on a connection whose bi-stream
	// is not set up yet waits for the setup before it is refused with
	// Nacos' "unregistered connection" (the client then reconnects).
	SetupWait time.Duration
	// MaxConns bounds the gRPC connections; past it new ones are refused.
	MaxConns int
	// WriteTimeout bounds one write to a client.
	WriteTimeout time.Duration
	// BeatTimeout is how long an instance registered over the 1.x HTTP
	// API lives without a beat (Nacos' ipDeleteTimeout, 30 s).
	BeatTimeout time.Duration
	// MaxListeners bounds the 1.x config long polls held at once
	// (listener.go); past it a poll is refused (503).
	MaxListeners int
	// ListenMinWait is the shortest a 1.x long poll is held when nothing
	// changes (Nacos' 10 s; tests lower it).
	ListenMinWait time.Duration
	// UDPAckTimeout is how long a UDP push to a 1.x subscriber waits for
	// its ack before it is sent once more (udp.go; Nacos' 10 s).
	UDPAckTimeout time.Duration
	// UDPSubscriberTTL is how long a 1.x subscriber is pushed to past its
	// last list (udp.go; Nacos' client expiry, 3 min).
	UDPSubscriberTTL time.Duration
	// MaxUDPSubscribers bounds the 1.x subscribers pushed over UDP
	// (udp.go); past it a list is answered and not pushed.
	MaxUDPSubscribers int
	// Host is the agent's host (package host): required.
	Host host.Host
	// Metrics gets the door's series (metrics.go); nil counts nothing.
	Metrics *metrics.Metrics
	// Logger gets structured logs with component=nacos; nil discards.
	Logger *slog.Logger
}

func (c *Config) setDefaults() error {
	if c.Host == nil {
		return errors.New("nacos: Config.Host is required (pass the agent's Host)")
	}
	if c.Addr == "" {
		return errors.New("nacos: Config.Addr is empty; use host:port, e.g. 127.0.0.1:8848")
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.Grace, DefaultGrace}, {&c.SetupWait, DefaultSetupWait}, {&c.WriteTimeout, DefaultWriteTimeout},
		{&c.BeatTimeout, BeatTimeout}, {&c.UDPAckTimeout, DefaultUDPAckTimeout}, {&c.UDPSubscriberTTL, DefaultUDPSubscriberTTL}, {&c.ListenMinWait, DefaultListenMinWait}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxUDPSubscribers <= 0 {
		c.MaxUDPSubscribers = DefaultMaxUDPSubscribers
	}
	if c.MaxListeners <= 0 {
		c.MaxListeners = DefaultMaxListeners
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Logger = c.Logger.With("component", "nacos")
	return nil
}

// GRPCAddr is the gRPC address Nacos 2.x clients derive from an HTTP
// address: the same host, port+1000.
func GRPCAddr(httpAddr string) (string, error) {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "", fmt.Errorf("nacos: address %q: %v", httpAddr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+GRPCPortOffset > 65535 {
		return "", fmt.Errorf("nacos: address %q: port must be 0..%d so that port+%d is a port", httpAddr, 65535-GRPCPortOffset, GRPCPortOffset)
	}
	if p == 0 {
		return net.JoinHostPort(host, "0"), nil
	}
	return net.JoinHostPort(host, strconv.Itoa(p+GRPCPortOffset)), nil
}

// Server is a Nacos endpoint backed by a namecast agent: the 2.x gRPC
// protocol and the 1.x open HTTP API.
type Server struct {
	cfg   Config
	reg   host.Host
	table *routes.Table
	log   *slog.Logger

	httpSrv, grpcSrv *http.Server
	httpLn, grpcLn   net.Listener
	ctx              context.Context // done at Close
	cancel           context.CancelFunc
	wg               sync.WaitGroup

	// grpcConns are the gRPC port's connections, within MaxConns: the
	// set hands grpcSrv those it lets in.
	grpcConns *conns.Set[net.Conn]

	// writeMu serialises changes, so a check and the change it guards (an
	// instance replacing its previous registration, a config CAS) are one
	// step for other writers on this agent.
	writeMu sync.Mutex

	// mu guards the clients, holders, beats and the push state; the
	// holders and what they hold change only under writeMu too.
	mu      sync.Mutex
	clients map[string]*client
	holders map[string]map[holder]struct{} // ephemeral record key -> its Nacos holders
	held    map[holder]*holding            // what each holder holds (holds.go)
	closed  bool
	refTime int64 // last lastRefTime handed out: strictly increasing
	// setupSignal is closed (and replaced) at every bi-stream setup.
	setupSignal chan struct{}
	beats       map[string]*beat       // 1.x HTTP instances by identity
	polls       map[*longPoll]struct{} // held 1.x config listeners

	push     pushState
	udp      udpState      // UDP push to 1.x subscribers (udp.go)
	stats    doorkit.Meter // nacos.* counters (metrics.go)
	refusals doorkit.Refusals
}

// NewServer checks cfg. It starts nothing.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if _, err := GRPCAddr(cfg.Addr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, reg: cfg.Host, table: cfg.Host.Table(), log: cfg.Logger,
		ctx: ctx, cancel: cancel, clients: map[string]*client{}, holders: map[string]map[holder]struct{}{}, held: map[holder]*holding{},
		setupSignal: make(chan struct{}), beats: map[string]*beat{}, polls: map[*longPoll]struct{}{}}
	s.stats.Name = "nacos"
	s.refusals = doorkit.Refusals{Log: s.log, Say: func(conns.Refusal) string { return "nacos: gRPC connection refused: MaxConns reached" }}
	s.grpcConns = conns.New[net.Conn](conns.Config{Total: cfg.MaxConns, Refused: s.refusals.Refused, Logger: s.log})
	s.push.init()
	return s, nil
}

// Start listens on Addr (HTTP) and its gRPC port and serves both.
func (s *Server) Start() error {
	hl, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("nacos: HTTP listener: %w", err)
	}
	ga, _ := GRPCAddr(hl.Addr().String())
	if _, p, _ := net.SplitHostPort(s.cfg.Addr); p == "0" {
		ga, _ = GRPCAddr(s.cfg.Addr)
	}
	gl, err := net.Listen("tcp", ga)
	if err != nil {
		hl.Close()
		return fmt.Errorf("nacos: gRPC listener (HTTP port + %d): %w", GRPCPortOffset, err)
	}
	s.Serve(hl, gl)
	return nil
}

// Serve serves the HTTP API on httpLn and gRPC on grpcLn, which the Server
// then owns (Close closes them). It returns at once.
func (s *Server) Serve(httpLn, grpcLn net.Listener) {
	s.httpLn, s.grpcLn = httpLn, grpcLn
	s.httpSrv = &http.Server{Handler: s.httpHandler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.grpcSrv = s.newGRPCServer()
	grpcAdmitted, err := s.grpcConns.Listener(grpcLn, func(nc net.Conn) net.Conn { return nc })
	if err != nil { // closed already: serve nothing
		httpLn.Close()
		grpcLn.Close()
		return
	}
	runs := []func(){
		func() { s.httpSrv.Serve(httpLn) },
		func() { s.grpcSrv.Serve(grpcAdmitted) },
		s.pushLoop,
		s.pollLoop, // listener.go
		s.beatLoop,
		s.metricsLoop,
	}
	if _, ok := httpLn.Addr().(*net.TCPAddr); !ok {
		// An in-memory listener (tests) has no IP to push from, and its
		// clients none to be pushed to.
		s.log.Debug("no UDP push to 1.x subscribers: the HTTP listener is not TCP", "addr", httpLn.Addr().String())
	} else if err := s.startUDP(httpLn.Addr()); err != nil {
		s.log.Error("no UDP push to 1.x subscribers: they get changes at their next list", "err", err)
	} else {
		runs = append(runs, s.udpAcks, s.udpLoop)
	}
	s.table.OnChange(s.push.changed)
	s.restoreLeases()
	for _, run := range runs {
		s.wg.Go(run)
	}
	s.log.Info("door listening", "door", "nacos", "addr", httpLn.Addr().String(), "grpc", grpcLn.Addr().String())
}

// Addr is the HTTP address (with the real port when configured as 0).
func (s *Server) Addr() string { return s.httpLn.Addr().String() }

// GRPCAddr is the gRPC address.
func (s *Server) GRPCAddr() string { return s.grpcLn.Addr().String() }

// Close stops both listeners and every connection, then waits for the
// door's goroutines. It withdraws nothing (the door contract, package
// doorkit): the agent is going away, and its records go with it,
// or come back with its restart, held by the leases the door saved until
// their clients reconnect or their grace ends.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.httpSrv.Close()
	s.grpcSrv.Close()
	if s.udp.conn != nil {
		s.udp.conn.Close()
	}
	s.grpcConns.Close()
	s.wg.Wait()
	return nil
}
