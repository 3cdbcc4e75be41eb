package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/command"
	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// Defaults of Config's zero fields, Java's values (§5.7).
const (
	DefaultIdleTimeout   = 120 * time.Second
	DefaultBrokerTimeout = 120 * time.Second
	DefaultScanInterval  = 5 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	// DefaultMaxConns and DefaultMaxConnsPerIP bound the connections open
	// at once, in all and from one client IP. Java's NameServer bounds
	// none, but its clients open few: a client process (its
	// MQClientInstance, shared by its producers and consumers) keeps one
	// connection to the NameServer it chose, a broker one to each, so a
	// host with a broker and a few dozen client processes opens a few
	// dozen. The bounds stop a flood (a runaway or hostile client opening
	// connections until the agent runs out of file descriptors), not use.
	DefaultMaxConns      = 10000
	DefaultMaxConnsPerIP = 1000
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// MaxFrame caps a frame, length prefix included (default 16 MiB, Java's
	// cap). Raise it for brokers with tens of thousands of topics, whose
	// registrations exceed 16 MiB (issue #5296).
	MaxFrame int
	// InFlight bounds the memory of big frames (over 64 KiB) read and not
	// yet run, over all connections (default four MaxFrames, 64 MiB): past
	// it connections wait before reading another (inflight.go). Lower
	// holds less for slow or hostile peers; higher lets more big broker
	// registrations be read at once.
	InFlight int64
	// IdleTimeout closes a connection that sent nothing for this long. A
	// broker's connection carries a registration every 30 s, so Java's 120 s
	// never closes a live broker.
	IdleTimeout time.Duration
	// BrokerTimeout expires a broker that sent no registration or heartbeat
	// for this long, unless its registration carried heartbeatTimeoutMillis.
	// Shorter means faster failover for brokers cut off without their TCP
	// connection closing, at the risk of dropping a broker over a long GC
	// pause.
	BrokerTimeout time.Duration
	// ScanInterval is how often expiry is checked (and request counts are
	// flushed to Metrics): the worst-case extra delay of an expiry.
	ScanInterval time.Duration
	// WriteTimeout bounds one write to a peer; a peer that stops reading its
	// responses is disconnected after it.
	WriteTimeout time.Duration
	// MaxConns bounds the connections open at once (default
	// DefaultMaxConns), MaxConnsPerIP those from one client IP (default
	// DefaultMaxConnsPerIP; every client on the agent's host shares
	// 127.0.0.1); negative: no bound. A connection past either is closed
	// before anything is read from it, logged and counted
	// (rocketmq.connections_refused).
	MaxConns      int
	MaxConnsPerIP int
	// Host is the agent's host (package host): required.
	Host host.Host
	// Logger gets structured logs with component=rocketmq; nil discards.
	Logger *slog.Logger
	// Metrics receives request counts and gauges; nil disables them.
	Metrics *metrics.Metrics

	// clock replaces time.Now for broker liveness (tests).
	clock func() time.Time
}

func (c *Config) setDefaults() error {
	if c.Host == nil {
		return errors.New("rocketmq: Config.Host is required (pass the agent's Host)")
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = remoting.DefaultMaxFrame
	}
	if c.MaxFrame < 1024 {
		return fmt.Errorf("rocketmq: MaxFrame %d is too small for any registration; use at least 1024 (default 16 MiB)", c.MaxFrame)
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxConnsPerIP == 0 {
		c.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	if c.InFlight <= 0 {
		c.InFlight = 4 * int64(c.MaxFrame)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.IdleTimeout, DefaultIdleTimeout}, {&c.BrokerTimeout, DefaultBrokerTimeout},
		{&c.ScanInterval, DefaultScanInterval}, {&c.WriteTimeout, DefaultWriteTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.clock == nil {
		c.clock = time.Now
	}
	return nil
}

// Server is a NameServer endpoint backed by a namecast agent.
type Server struct {
	cfg Config
	reg host.Host
	log *slog.Logger
	now func() time.Time // the clock of broker liveness

	ln      net.Listener
	ctx     context.Context // done at Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup    // the loops but the accept loop (conns owns that)
	conns   *conns.Set[*conn] // the connections: accepted within the bounds, served, closed at Close
	closing atomic.Bool       // set first thing in Close: no more unregistrations

	// refusals counts and says the connections refused for MaxConns and
	// MaxConnsPerIP.
	refusals doorkit.Refusals

	brokers  brokerTable
	commands *command.Inbox // admin writes other agents sent here (commands.go)
	// deletedTopics are "broker name/topic" deleted here by an admin
	// command, with when; guarded by brokers.mu (groups.go).
	deletedTopics map[string]deletedTopic
	groupChanges  groupChanges // fed by the table's OnChange hook
	cache         routeCache
	stats         requestStats
	inflight      *budget // big frames read, not yet run (inflight.go)
	opts          runtimeOptions
}

// NewServer checks cfg. It starts nothing.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:      cfg,
		reg:      cfg.Host,
		log:      cfg.Logger.With("component", "rocketmq"),
		now:      cfg.clock,
		ctx:      ctx,
		cancel:   cancel,
		inflight: newBudget(cfg.InFlight),
	}
	s.stats.init()
	s.refusals = doorkit.Refusals{Counter: s.stats.refusedConns, Log: s.log, Say: refusalWarning}
	s.conns = conns.New[*conn](conns.Config{Total: cfg.MaxConns, PerIP: cfg.MaxConnsPerIP, Refused: s.refusals.Refused, Logger: s.log})
	s.commands = s.newInbox()
	s.brokers.live = map[liveKey]*liveBroker{}
	s.deletedTopics = map[string]deletedTopic{}
	s.opts.returnOrderTopicConfig.Store(true)
	s.stats.meter.Flush(cfg.Metrics) // at 0 from the start, so an alert's rate() sees the first refusal
	return s, nil
}

// Serve serves on ln, which the Server then owns (Close closes it), and
// returns at once: the agent binds its doors' listeners (package agent
// says the contract), so tests can hand in in-memory ones.
func (s *Server) Serve(ln net.Listener) error {
	if s.closing.Load() {
		return errors.New("rocketmq: server already closed")
	}
	if s.ln != nil {
		return errors.New("rocketmq: server already started")
	}
	s.ln = ln
	s.reg.Table().OnChange(s.groupChanges.note)
	s.restoreLeases()
	if err := s.conns.Serve(ln, func(nc net.Conn) *conn { return newConn(s, nc) }, (*conn).serve); err != nil {
		return fmt.Errorf("rocketmq: %w", err)
	}
	s.wg.Go(s.housekeepingLoop)
	s.wg.Go(s.commandLoop)
	s.log.Info("door listening", "door", "rocketmq", "addr", ln.Addr().String())
	return nil
}

// Addr is the bound address (with the real port), or "" before Serve.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops accepting, closes every connection and waits for every
// goroutine. Brokers connected here are not unregistered: the agent is going
// away, and its records go with it. Safe to call more than once.
func (s *Server) Close() error {
	if s.closing.Swap(true) {
		return nil
	}
	s.cancel()
	err := s.conns.Close()
	s.wg.Wait()
	return err
}

// refusalWarning is the warning for a connection refused for r's bound.
func refusalWarning(r conns.Refusal) string {
	bound, advice := "MaxConns: connections in all", "rocketmq_max_conns"
	if r.PerIP {
		bound, advice = "MaxConnsPerIP: connections from one client IP", "rocketmq_max_conns_per_ip"
	}
	return "too many connections; closing new ones (" + bound + "; raise " + advice + " in the agent's config file if these are real clients)"
}

// housekeepingLoop expires silent brokers and flushes request counts.
func (s *Server) housekeepingLoop() {
	doorkit.Every(s.ctx, s.cfg.ScanInterval, func(time.Time) {
		s.expireBrokers()
		s.flushMetrics()
	})
}
