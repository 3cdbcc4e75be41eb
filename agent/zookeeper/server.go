package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/command"
	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/routes"
)

// Defaults of Config's zero fields.
const (
	DefaultGrace             = 5 * time.Second
	DefaultMinSessionTimeout = 4 * time.Second  // 2 × Debian's tickTime
	DefaultMaxSessionTimeout = 40 * time.Second // 20 × tickTime
	DefaultDeleteHold        = 500 * time.Millisecond
	DefaultRecreateWindow    = 10 * time.Second
	DefaultReadyWait         = 30 * time.Second
	DefaultMaxSessions       = 10000
	DefaultMaxClientConns    = 60
	DefaultMaxWatches        = 1000000
	DefaultWriteTimeout      = 10 * time.Second
	DefaultContainerCheck    = 5 * time.Second
	DefaultRefusalPace       = time.Second
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// Grace bounds how long a session whose connection closed without
	// closeSession lives on (the client process most likely died; a live
	// one reconnects within it). Shorter than the session timeout, so a
	// crashed provider disappears in seconds.
	Grace time.Duration
	// MinSessionTimeout and MaxSessionTimeout clamp what clients ask for,
	// as ZooKeeper's 2 and 20 ticks do.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// DeleteHold delays gossiping the delete of an ephemeral znode, so a
	// delete and re-create of the same path (curator-x-discovery and
	// dubbo-go do it on every reconnect) reaches other agents as one update
	// instead of a disappearance. Locally the delete is seen at once.
	DeleteHold time.Duration
	// RecreateWindow is how soon after its session connected or
	// re-attached a delete is held (DeleteHold): the reconnect pattern
	// above re-registers right after the connection is back, while a
	// deliberate unregister (a provider shutting down) comes long after
	// it, and reaches other agents at once.
	RecreateWindow time.Duration
	// ReadyWait bounds how long a new connection waits for the agent's
	// first sync before it is answered anyway.
	ReadyWait time.Duration
	// MaxSessions and MaxWatches bound this agent's sessions and armed
	// watches; past them connections and watch requests are refused with a
	// log line naming the limit.
	MaxSessions, MaxWatches int
	// MaxClientConns bounds the connections open at once from one client
	// IP, as ZooKeeper's maxClientCnxns (default 60) does: past it a new
	// connection is closed before its handshake is read, so one process
	// cannot make the agent hold thousands of half-open handshakes. Every
	// client on this host shares 127.0.0.1: raise it for hosts with more
	// than 60 ZooKeeper clients. Negative: no bound.
	MaxClientConns int
	// WriteTimeout bounds one write to a client.
	WriteTimeout time.Duration
	// ContainerCheck spaces the checks for empty container nodes, which go
	// at the second check that finds them empty (containers.go).
	// ZooKeeper's default is a minute; sooner keeps Curator's lock and
	// leader parents from piling up, and a client must expect it anyway.
	ContainerCheck time.Duration
	// RefusalPace spaces a session's refused requests (UNIMPLEMENTED,
	// refusals.go): the first is answered at once, each later one no
	// sooner than this after the one before, so a recipe that retries at
	// once does not spin. Below a third of the session timeout, so the
	// client still hears from the agent in time.
	RefusalPace time.Duration
	// Host is the agent's host (package host): required.
	Host host.Host
	// Logger gets structured logs with component=zookeeper; nil discards.
	Logger *slog.Logger
	// Metrics receives counters and gauges; nil disables them.
	Metrics *metrics.Metrics
}

func (c *Config) setDefaults() error {
	if c.Host == nil {
		return errors.New("zookeeper: Config.Host is required (pass the agent's Host)")
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.Grace, DefaultGrace}, {&c.MinSessionTimeout, DefaultMinSessionTimeout},
		{&c.MaxSessionTimeout, DefaultMaxSessionTimeout}, {&c.DeleteHold, DefaultDeleteHold},
		{&c.RecreateWindow, DefaultRecreateWindow},
		{&c.ReadyWait, DefaultReadyWait}, {&c.WriteTimeout, DefaultWriteTimeout},
		{&c.ContainerCheck, DefaultContainerCheck}, {&c.RefusalPace, DefaultRefusalPace}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.MaxSessionTimeout < c.MinSessionTimeout {
		return fmt.Errorf("zookeeper: MaxSessionTimeout %v is below MinSessionTimeout %v", c.MaxSessionTimeout, c.MinSessionTimeout)
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxClientConns == 0 {
		c.MaxClientConns = DefaultMaxClientConns
	}
	if c.MaxWatches <= 0 {
		c.MaxWatches = DefaultMaxWatches
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Server is a ZooKeeper endpoint backed by a namecast agent.
type Server struct {
	cfg   Config
	reg   host.Host // the agent's: changes, the table, readiness, leases (leases.go)
	table *routes.Table
	local string // this agent's origin name
	log   *slog.Logger

	ln     net.Listener
	ctx    context.Context // done at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// writeMu serialises local writes, so a write's checks, its change to
	// the table and the refresh of the tree are one step for other writers.
	writeMu sync.Mutex

	// mu guards the tree, the watches, the sessions and what each
	// connection holds (its session and watches).
	// Notifications are queued under it, so a reply built under it after a
	// change always follows that change's notifications.
	mu       sync.Mutex
	tree     tree
	watches  watchTable
	sessions map[int64]*session
	owners   map[string]int64       // ephemeral record key -> owning local session
	hidden   map[string]*heldDelete // local deletes not yet gossiped (DeleteHold)
	// containers are the tree paths of container nodes (containers.go).
	containers map[string]struct{}
	// suppressed hides other agents' records deleted through this agent
	// until their agents withdraw them (commands.go).
	suppressed map[string][]suppression
	// casWrites are the versioned setData calls through this agent on
	// persistent znodes, by record key, until another write replaces
	// them (conflicts.go).
	casWrites map[string]casWrite
	zxid      int64
	closed    bool

	// conns are the client connections: accepted within MaxClientConns,
	// served, closed at Close.
	conns *conns.Set[*conn]

	dirty dirtySet
	stats stats

	refusals doorkit.Refusals // says connections over MaxClientConns are refused, now and again

	// commands are the deletes other agents leave this one (commands.go).
	commands *command.Inbox
}

// NewServer checks cfg. It starts nothing.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg: cfg, reg: cfg.Host, table: cfg.Host.Table(),
		log: cfg.Logger.With("component", "zookeeper"),
		ctx: ctx, cancel: cancel,
		sessions: map[int64]*session{}, owners: map[string]int64{}, hidden: map[string]*heldDelete{},
		containers: map[string]struct{}{}, suppressed: map[string][]suppression{}, casWrites: map[string]casWrite{},
	}
	s.refusals = doorkit.Refusals{Log: s.log, Say: func(conns.Refusal) string {
		return "too many connections from one client IP; closing new ones (ZooKeeper's maxClientCnxns)"
	}}
	s.conns = conns.New[*conn](conns.Config{PerIP: cfg.MaxClientConns, Refused: s.refusals.Refused, Logger: s.log})
	s.local = s.table.Local()
	s.commands = s.newInbox()
	s.watches.init()
	s.dirty.init()
	s.stats.init()
	return s, nil
}

// Serve loads the tree from the table and serves on ln, which the Server
// then owns (Close closes it), and returns at once: the agent binds its
// doors' listeners (package agent says the contract), so tests can hand
// in in-memory ones.
func (s *Server) Serve(ln net.Listener) error {
	if s.ln != nil {
		return errors.New("zookeeper: server already started")
	}
	s.ln = ln
	s.table.OnChange(s.dirty.add)
	s.restoreLeases()
	s.mu.Lock()
	s.tree.init(s.nextZxid())
	for _, k := range s.table.Keys("") {
		s.dirty.add(k)
	}
	s.mu.Unlock()
	s.syncDirty()
	if err := s.conns.Serve(ln, func(nc net.Conn) *conn { return newConn(s, nc) }, (*conn).serve); err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	s.wg.Go(s.syncLoop)
	s.wg.Go(s.housekeepingLoop)
	s.wg.Go(s.containerLoop)
	s.log.Info("door listening", "door", "zookeeper", "addr", ln.Addr().String())
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
// goroutine. Sessions end without withdrawing their ephemeral znodes one by
// one: the agent is going away, and its records go with it.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, h := range s.hidden {
		h.timer.Stop()
	}
	for _, ss := range s.sessions {
		ss.stopTimer()
	}
	s.mu.Unlock()
	s.cancel()
	err := s.conns.Close()
	s.wg.Wait()
	return err
}

// nextZxid advances the local zxid clock: strictly increasing, and
// starting from wall-clock microseconds so a restarted agent issues larger
// zxids than its previous run (spec §7.3). s.mu held.
func (s *Server) nextZxid() int64 {
	s.zxid = max(s.zxid+1, time.Now().UnixMicro())
	return s.zxid
}
