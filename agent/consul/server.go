package consul

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/consul/checks"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// Agent is what the door asks of its agent: the members (Consul's nodes)
// and whether it is leaving (writes are refused then).
type Agent interface {
	Members() []gossip.Member
	Leaving() bool
}

// Config configures a Server.
type Config struct {
	// Host is the agent's host: required.
	Host host.Host
	// Agent gives the members; nil: this agent is the only node.
	Agent Agent
	// Node is the agent's name: Consul's node name.
	Node string
	// Datacenter is the one datacenter answered for; "": dc1.
	Datacenter string
	// MaxConns bounds the connections open at once; 0: DefaultMaxConns,
	// negative: no bound.
	MaxConns int
	Logger   *slog.Logger
	Metrics  *metrics.Metrics
}

// DefaultMaxConns is Config.MaxConns' default, as the HTTP API's.
const DefaultMaxConns = 10000

// Bounds of one connection and request.
const (
	readTimeout    = 30 * time.Second
	idleConnection = 2 * time.Minute
	writeTimeout   = 30 * time.Second
	maxHeaderBytes = 64 << 10
	// maxBody bounds a JSON body (a registration is a few KB).
	maxBody = 1 << 20
	// maxKVValue is Consul's kv_max_value_size default.
	maxKVValue = 512 << 10
	// Blocking queries: Consul's default and longest wait.
	defaultWait = 5 * time.Minute
	maxWait     = 10 * time.Minute
)

// Server is the Consul door of one agent.
type Server struct {
	cfg         Config
	host        host.Host
	table       *routes.Table
	log         *slog.Logger
	metrics     *metrics.Metrics
	conns       *conns.Set[net.Conn]
	reg         *registry
	checks      *checks.Runner
	ln          net.Listener
	srv         *http.Server
	ctx         context.Context // done at Close: ends blocked queries
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	started     atomic.Bool
	closed      atomic.Bool
	refusedWarn doorkit.NowAndAgain
	kvMu        sync.Mutex // one KV write (its ?cas and the write) at a time
	cache       wholeCache
}

// New checks cfg and builds the door. It serves nothing until Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Host == nil {
		return nil, errors.New("consul: Config.Host is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		mc := metrics.DefaultConfig("namecast")
		mc.EnableRuntimeMetrics = false
		m, err := metrics.New(mc, &metrics.BlackholeSink{})
		if err != nil {
			return nil, err
		}
		cfg.Metrics = m
	}
	if cfg.Datacenter == "" {
		cfg.Datacenter = DefaultDatacenter
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, host: cfg.Host, table: cfg.Host.Table(), log: cfg.Logger, metrics: cfg.Metrics, ctx: ctx, cancel: cancel}
	s.conns = conns.New[net.Conn](conns.Config{Total: cfg.MaxConns, Refused: s.refusedConn, Logger: cfg.Logger})
	s.reg = newRegistry(s)
	s.checks = checks.New(checks.Config{Report: func(id string, _ checks.State) { s.reg.reportCheck(id) },
		Deregister: s.reg.deregisterCritical, Logger: cfg.Logger, Metrics: cfg.Metrics})
	s.metrics.IncrCounter([]string{"consul", "connections_refused"}, 0)
	return s, nil
}

// Serve takes back the services registered before the agent's restart,
// then serves on ln, which the door then owns, and returns at once.
func (s *Server) Serve(ln net.Listener) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("consul: server already started")
	}
	if ln == nil {
		return errors.New("consul: no listener")
	}
	admitted, err := s.conns.Listener(ln, func(nc net.Conn) net.Conn { return nc })
	if err != nil {
		return fmt.Errorf("consul: %w", err)
	}
	s.ln = ln
	s.reg.restore()
	s.srv = &http.Server{Handler: s.guard(s.routes()), ReadHeaderTimeout: readTimeout, ReadTimeout: readTimeout,
		WriteTimeout: maxWait + maxWait/16 + writeTimeout, IdleTimeout: idleConnection, MaxHeaderBytes: maxHeaderBytes}
	s.wg.Go(func() {
		if err := s.srv.Serve(admitted); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("Consul door stopped", "err", err)
		}
	})
	return nil
}

// Handler is what the door serves (tests call it without a listener).
func (s *Server) Handler() http.Handler { return s.guard(s.routes()) }

// Addr is the address the door listens on, "" before Serve.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close ends blocked queries, stops the checks, closes the listener and
// every connection, and waits for the door's goroutines. It withdraws
// nothing (the agent's records go with it). Safe to call more than once.
func (s *Server) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.cancel()
	s.checks.Close()
	var err error
	if s.srv != nil {
		err = s.srv.Close()
	}
	s.conns.Close()
	s.wg.Wait()
	return err
}

var refusedAnswer = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" +
	"too many connections to this agent's Consul port; try again later\n")

func (s *Server) refusedConn(r conns.Refusal) {
	s.metrics.IncrCounter([]string{"consul", "connections_refused"}, 1)
	r.Conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	r.Conn.Write(refusedAnswer)
	if s.refusedWarn.Allow() {
		s.log.Warn("too many Consul connections; answering new ones 503 and closing them (raise consul_max_conns in the agent's config file if these are real clients)",
			"ip", r.IP, "max", r.Max, "refused_so_far", r.Count)
	}
}
