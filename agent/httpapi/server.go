// Package httpapi is the agent's HTTP door: the JSON API under /v1/ (the
// registrations of brokers, Dubbo URLs and Dubbo 3 application instances
// made over it, with their TTLs,
// and the views of the replicated table, as blocking queries), the web UI
// and /metrics, behind the guard against web pages (guard.go).
//
// Like the RocketMQ and ZooKeeper doors it turns its clients' requests
// into records through the agent's host (package host), and holds what it
// registered under one lease per registration (package lease), so a
// registration survives the agent's restart with its TTL running on. What
// it shows and does beyond records (members, join, leave, the keyring,
// the agent's own description) it asks of its Agent. Its connections are
// bounded in number and each in time and size (conns.go).
package httpapi

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
	"github.com/hashicorp/serf/coordinate"

	"github.com/namecast/namecast/agent/conns"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// Agent is what the HTTP door shows and does beyond the records: the
// agent's membership and lifecycle. The agent implements it.
type Agent interface {
	// Members, AliveMembers, Join and Coordinates are gossip's.
	Members() []gossip.Member
	AliveMembers() int
	Join(addrs []string) (int, error)
	Coordinates() (self *coordinate.Coordinate, others map[string]*coordinate.Coordinate)
	// Info describes the agent (GET /v1/agent).
	Info() (AgentInfo, error)
	// RequestLeave asks the agent to leave the cluster (POST /v1/leave);
	// Leaving reports that it is leaving or stopping: writes are refused.
	RequestLeave()
	Leaving() bool
	// ChangeKeys runs a keyring operation on every member (POST /v1/keys);
	// an error means the operation is invalid and nothing ran.
	ChangeKeys(ctx context.Context, op, key string) (any, error)
	// Metrics serves the agent's metrics (GET /metrics).
	Metrics() http.Handler
}

// Config configures a Server.
type Config struct {
	// Host is the agent's host: required.
	Host host.Host
	// Agent is the agent: required.
	Agent Agent
	// Node is the agent's name, shown by the API.
	Node string
	// Addr is the configured listen address (--http): a request naming its
	// host in its Host header is let through (guard.go).
	Addr string
	// Token, when set, is required as a bearer token on every write.
	Token string
	// AllowHosts are further host names requests may name (guard.go).
	AllowHosts []string
	// MaxConns bounds the connections open at once (conns.go); 0:
	// DefaultMaxConns, negative: no bound.
	MaxConns int
	// Logger gets structured logs; nil discards them.
	Logger *slog.Logger
	// Metrics receives request timings and counts; nil disables them.
	Metrics *metrics.Metrics
}

// Server is the HTTP door. Its zero value is not usable: see New.
type Server struct {
	cfg     Config
	host    host.Host
	agent   Agent
	table   *routes.Table
	log     *slog.Logger
	metrics *metrics.Metrics

	ttl   *ttls
	regMu sync.Mutex // serialises read-modify-write of this door's registrations and their TTLs
	// appsMu serialises instance registrations that name interfaces, from
	// their application's mapping to the instance (registry_apps.go).
	appsMu sync.Mutex
	// globalWatches makes every blocking query wait on the table's global
	// index instead of its view's: benchmarks compare the two.
	globalWatches atomic.Bool

	ln       net.Listener
	srv      *http.Server
	conns    *conns.Set[net.Conn] // the connections, within MaxConns (conns.go)
	refusals doorkit.Refusals     // says a connection refused for MaxConns, now and again
	ctx      context.Context      // done at Close; ends blocked queries and the expire loop
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  atomic.Bool
}

// New checks cfg and builds the door. It serves nothing until Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Host == nil || cfg.Agent == nil {
		return nil, errors.New("httpapi: Config.Host and Config.Agent are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		mc := metrics.DefaultConfig("namecast")
		mc.EnableRuntimeMetrics = false // its collector goroutine would outlive the door
		m, err := metrics.New(mc, &metrics.BlackholeSink{})
		if err != nil {
			return nil, err
		}
		cfg.Metrics = m
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, host: cfg.Host, agent: cfg.Agent, table: cfg.Host.Table(), log: cfg.Logger,
		metrics: cfg.Metrics, ttl: newTTLs(), ctx: ctx, cancel: cancel}
	s.refusals = doorkit.Refusals{Log: s.log, Say: func(conns.Refusal) string {
		return "too many HTTP connections; answering new ones 503 and closing them (raise http_max_conns in the agent's config file if these are real clients)"
	}}
	s.conns = conns.New[net.Conn](conns.Config{Total: cfg.MaxConns, Refused: s.refused, Logger: cfg.Logger})
	// At 0 from the start, so an alert's rate() sees the first refusal.
	s.m().IncrCounter([]string{"http", "connections_refused"}, 0)
	return s, nil
}

// Serve takes back the registrations restored at the agent's start (their
// TTLs run on from where they were), then serves on ln, which the door
// then owns (Close closes it), and returns at once: the agent binds its
// doors' listeners (package agent says the contract).
func (s *Server) Serve(ln net.Listener) error {
	if !s.started.CompareAndSwap(false, true) {
		return errors.New("httpapi: server already started")
	}
	if ln == nil {
		return fmt.Errorf("httpapi: no listener")
	}
	admitted, err := s.admit(ln)
	if err != nil {
		return err
	}
	s.ln = ln
	s.restoreLeases()
	mux := http.NewServeMux()
	mux.Handle("/v1/health", s.watched(s.membersView, methods{"GET": s.getHealth}))
	mux.Handle("/v1/members", s.watched(s.membersView, methods{"GET": s.getMembers}))
	mux.Handle("/v1/join", s.endpoint(methods{"POST": s.postJoin}))
	mux.Handle("/v1/leave", s.endpoint(methods{"POST": s.postLeave}))
	mux.Handle("/v1/brokers", s.endpoint(methods{"PUT": s.putBroker}))
	mux.Handle("/v1/brokers/{cluster}/{brokerName}/{brokerId}", s.endpoint(methods{"DELETE": s.deleteBroker}))
	mux.Handle("/v1/topics", s.watched(s.topicsView, methods{"GET": s.getTopics}))
	mux.Handle("/v1/topics/{topic}", s.watched(s.topicView, methods{"GET": s.getTopic}))
	mux.Handle("/v1/clusters", s.watched(s.clustersView, methods{"GET": s.getClusters}))
	mux.Handle("/v1/urls", s.endpoint(methods{"PUT": s.putURL, "DELETE": s.deleteURL}))
	mux.Handle("/v1/services", s.watched(s.servicesView, methods{"GET": s.getServices}))
	mux.Handle("/v1/services/{interface}", s.watched(s.serviceView, methods{"GET": s.getService}))
	mux.Handle("/v1/services/{interface}/apps", s.watched(s.serviceAppsView, methods{"GET": s.getServiceApps}))
	mux.Handle("/v1/apps", s.watched(s.appsView, methods{"GET": s.getApps}))
	mux.Handle("/v1/apps/{app}", s.watched(s.appView, methods{"GET": s.getApp}))
	mux.Handle("/v1/apps/{app}/instances", s.endpoint(methods{"PUT": s.putInstance}))
	mux.Handle("/v1/apps/{app}/instances/{id}", s.endpoint(methods{"DELETE": s.deleteInstance}))
	mux.Handle("/v1/keys", s.endpoint(methods{"POST": s.postKeys}))
	mux.Handle("/metrics", s.agent.Metrics())
	s.serveUI(mux)
	mux.Handle("/", s.endpoint(nil))
	// The bounds of one connection (conns.go). WriteTimeout is the
	// longest any answer may take; each request sets its own (guard).
	s.srv = &http.Server{Handler: s.guard(mux), ReadHeaderTimeout: readTimeout, ReadTimeout: readTimeout,
		WriteTimeout: maxWait + writeTimeout, IdleTimeout: idleConnection, MaxHeaderBytes: maxHeaderBytes, ErrorLog: nil}
	s.wg.Go(func() {
		if err := s.srv.Serve(admitted); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("HTTP API stopped", "err", err)
		}
	})
	s.wg.Go(s.expireLoop)
	return nil
}

// Handler is what the door serves (tests call it without a listener);
// nil before Serve.
func (s *Server) Handler() http.Handler {
	if s.srv == nil {
		return nil
	}
	return s.srv.Handler
}

// Addr is the address the door listens on (with the real port), or ""
// before Serve.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close ends blocked queries and the expire loop, lets requests in flight
// finish (for at most 2 s) and waits for its goroutines. Registrations
// are not withdrawn: the agent is going away, and its records go with it.
// Safe to call more than once.
func (s *Server) Close() error {
	s.cancel()
	if s.srv == nil {
		if s.ln != nil {
			s.ln.Close()
		}
		s.conns.Close()
		s.wg.Wait()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	s.conns.Close() // after Shutdown, which closes the listener and the idle connections first
	s.wg.Wait()
	return nil
}

func (s *Server) m() *metrics.Metrics { return s.metrics }
