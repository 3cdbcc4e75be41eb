package redis

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/redis/resp"
	"github.com/namecast/namecast/routes"
)

// Defaults of Config's zero fields.
const (
	DefaultExpiry           = 60 * time.Second // Dubbo's session default
	DefaultMaxClients       = 1000
	DefaultMaxSubscriptions = 1024
	DefaultOutQueue         = 1024
	DefaultSweep            = 250 * time.Millisecond
	DefaultReadyWait        = 30 * time.Second
	DefaultWriteTimeout     = 10 * time.Second
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	// Host is the agent (host.Local.For("redis")); required.
	Host host.Host
	// Password, when set, is required by AUTH before any other command,
	// as Redis' requirepass; "" accepts every client, as a Redis without
	// one does.
	Password string
	// Expiry is what HGET and HGETALL show as the expiry of a field this
	// door does not hold (registered through another door or agent):
	// now + Expiry, so that Dubbo, which drops rows whose expiry passed,
	// keeps it; such a field lives while its holder does.
	Expiry time.Duration
	// MaxClients bounds the connections open at once, as Redis'
	// maxclients: past it a connection is told "max number of clients
	// reached" and closed.
	MaxClients int
	// MaxSubscriptions bounds the channels and patterns one connection
	// subscribes to.
	MaxSubscriptions int
	// OutQueue bounds the replies and messages waiting to be written to
	// one connection: a subscriber that falls that far behind is
	// disconnected, as Redis' pubsub output buffer limit does.
	OutQueue int
	// Sweep is how often fields whose expiry passed are looked for.
	Sweep time.Duration
	// ReadyWait bounds how long a connection's first read of the registry
	// waits for the agent's first sync with its cluster.
	ReadyWait time.Duration
	// WriteTimeout bounds one write to a client.
	WriteTimeout time.Duration
	// Limits bound one command (resp.DefaultLimits when zero).
	Limits  resp.Limits
	Logger  *slog.Logger
	Metrics *metrics.Metrics
}

func (c *Config) fill() {
	for _, d := range []struct {
		p *time.Duration
		v time.Duration
	}{{&c.Expiry, DefaultExpiry}, {&c.Sweep, DefaultSweep}, {&c.ReadyWait, DefaultReadyWait}, {&c.WriteTimeout, DefaultWriteTimeout}} {
		if *d.p <= 0 {
			*d.p = d.v
		}
	}
	for _, n := range []struct {
		p *int
		v int
	}{{&c.MaxClients, DefaultMaxClients}, {&c.MaxSubscriptions, DefaultMaxSubscriptions}, {&c.OutQueue, DefaultOutQueue}} {
		if *n.p == 0 {
			*n.p = n.v
		}
	}
	if c.Limits == (resp.Limits{}) {
		c.Limits = resp.DefaultLimits
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Server is the Redis door of one agent.
type Server struct {
	cfg     Config
	host    host.Host
	table   *routes.Table
	log     *slog.Logger
	set     *conns.Set[*conn]
	ctx     context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	addr    string
	started time.Time

	holds   // holds.go: the fields this door holds, and their expiry
	feed    // feed.go: changes of the table published to subscribers
	pubsub  // pubsub.go: who subscribes to what
	counts  // metrics.go
	closeMu sync.Mutex
	closed  bool
}

// NewServer makes the door; it starts nothing.
func NewServer(cfg Config) *Server {
	cfg.fill()
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, host: cfg.Host, table: cfg.Host.Table(), log: cfg.Logger.With("component", "redis"), ctx: ctx, stop: stop}
	s.holds.init()
	s.feed.init()
	s.pubsub.init()
	refusals := &doorkit.NowAndAgain{}
	s.set = conns.New[*conn](conns.Config{Total: cfg.MaxClients, Logger: cfg.Logger, Refused: func(r conns.Refusal) {
		r.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		r.Conn.Write([]byte("-ERR max number of clients reached\r\n"))
		s.counts.refusedConns.Add(1)
		if refusals.Allow() {
			s.log.Warn("Redis connection refused: the door holds its most connections; raise redis_max_clients if this host has more Redis clients",
				"max", r.Max, "refused", r.Count)
		}
	}})
	return s
}

// Serve restores the fields held before a restart, then serves ln until
// Close; it returns once the door serves.
func (s *Server) Serve(ln net.Listener) error {
	s.addr = ln.Addr().String()
	s.started = time.Now()
	s.restore()
	s.table.OnChange(s.noteChange)
	s.wg.Go(s.feedLoop)
	s.wg.Go(func() { doorkit.Every(s.ctx, s.cfg.Sweep, s.expire) })
	if s.cfg.Metrics != nil {
		s.wg.Go(func() { doorkit.Every(s.ctx, 2*time.Second, func(time.Time) { s.flush() }) })
	}
	if err := s.set.Serve(ln, s.open, s.serveConn); err != nil {
		return err
	}
	s.log.Info("door listening", "door", "redis", "addr", s.addr)
	return nil
}

// Addr is where the door listens.
func (s *Server) Addr() string { return s.addr }

// Addrs names the door's one listener.
func (s *Server) Addrs() []doorkit.Addr { return []doorkit.Addr{{Name: "redis", Addr: s.addr}} }

// Close stops accepting, closes every connection and waits for the door's
// goroutines. It withdraws nothing: the fields go with the agent, or come
// back with its restart. Safe to call more than once.
func (s *Server) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	s.stop()
	err := s.set.Close()
	s.wg.Wait()
	return err
}
