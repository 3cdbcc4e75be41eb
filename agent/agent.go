package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/memberlist"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// Agent is one namecast process.
type Agent struct {
	cfg    Config
	log    *slog.Logger
	table  *routes.Table
	host   *host.Local  // what every door is given
	leases *lease.Store // doors' holds on our records, kept across restarts
	rules  rulesStore   // the bound on rules and their log in the data dir: the doors' rule writes

	readiness readiness

	gossip    *gossip.Gossip
	discovery discovery // peers over mDNS (--discover)
	doors     doorSet
	ring      *memberlist.Keyring // nil: gossip is not encrypted
	dirLock   *dirLock            // held while the agent uses its data dir
	metrics   *metrics.Metrics
	prom      *prometheus.Registry
	metricsL  metricsListener // --metrics
	startErr  error           // why Start failed, for Shutdown's last line

	// settling: registrations were restored, and our origin is
	// withheld from gossip until compared with the cluster's (settle.go).
	settling bool
	leaving  atomic.Bool
	left     chan struct{}   // closed when a leave was requested over the API
	ctx      context.Context // done at shutdown; ends loops and blocked queries
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the agent's loops, waited for at Shutdown
	stopOnce sync.Once
	leftOnce sync.Once
}

// New checks cfg and prepares an agent. It starts nothing.
func New(cfg Config) (*Agent, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.EncryptKeyFile != "" {
		key, err := readKeyFile(cfg.EncryptKeyFile)
		if err != nil {
			return nil, err
		}
		cfg.EncryptKey = key
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{
		cfg:    cfg,
		log:    cfg.Logger.With("component", "agent", "node", cfg.NodeName),
		left:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}, nil
}

// Start binds every listener, starts gossip and joins the configured
// members. On error, whatever had started is stopped again.
func (a *Agent) Start(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			a.startErr = err
			a.Shutdown()
		}
	}()
	a.readiness.started, a.readiness.stop = time.Now(), a.ctx.Done()
	if a.dirLock, err = lockDataDir(a.cfg.DataDir, a.cfg.NodeName); err != nil {
		return err
	}
	if a.cfg.DataDir != "" {
		removeTemps(a.cfg.DataDir)
	}
	var rejoin []string // the previous run's members, when nothing else says whom to join
	if len(a.cfg.Join) == 0 {
		rejoin = snapshotAddrs(a.cfg.DataDir, a.log)
	}
	a.readiness.expectsPeers = len(a.cfg.Join) > 0 || len(a.cfg.RetryJoin) > 0 || a.cfg.Discover != "" || len(rejoin) > 0
	inc, err := incarnation(a.cfg.DataDir, a.log)
	if err != nil {
		return err
	}
	a.table = routes.NewTable(a.cfg.NodeName, inc)
	a.table.SetBudget(a.cfg.budget())
	a.rules = rulesStore{table: a.table, dir: a.cfg.DataDir, limit: a.cfg.RulesLimit, ready: &a.readiness, logger: a.log}
	if err := a.rules.load(); err != nil {
		return err
	}
	a.leases = lease.NewStore(a.cfg.DataDir, a.table, a.log)
	restored := a.leases.Restore()
	a.settling = len(restored.Ops) > 0
	if a.prom, a.metrics, err = newMetrics(a.cfg.version()); err != nil {
		return err
	}
	if err := a.doors.bind(a.cfg.Doors(), a.cfg.Listen, a.log); err != nil {
		return err
	}
	if err := a.startGossip(); err != nil {
		return err
	}
	a.readiness.gossip, a.rules.publish = a.gossip, a.gossip.Publish
	a.host = host.New(host.Config{Table: a.table, Leases: a.leases, Publish: a.gossip.Publish, RTT: a.gossip.RTT,
		Rules: a.rules.apply, Ready: a.readiness.Ready, Metrics: a.metrics, Logger: a.log, Budget: a.cfg.budget()})
	if a.settling {
		// Before publishing, and before the doors take the leases
		// back: what the cluster saw since the files were written wins.
		a.publishRestored(restored, a.settleRestored(rejoin))
	}
	env := doorkit.Env{Node: a.cfg.NodeName, Logger: a.cfg.Logger.With("node", a.cfg.NodeName), Metrics: a.metrics,
		ReadyWait: readyAfter, Agent: httpAgent{a}}
	if err := a.doors.start(env, a.host); err != nil {
		return err
	}
	if err := a.metricsL.start(a.cfg.MetricsAddr, a.cfg.Listen, a.log, &a.wg,
		metricsHandler(a.prom, a.metrics, a.table, a.gossip), healthHandler(a.cfg.NodeName, &a.leaving, a.gossip, a.Ready)); err != nil {
		return err
	}
	a.dropUnclaimed()
	a.discovery = discovery{name: a.cfg.Discover, ifaceName: a.cfg.DiscoverInterface, node: a.cfg.NodeName,
		gossip: a.gossip, log: a.log, joined: func() { a.readiness.joined.Store(true) }}
	if err := a.discovery.start(a.ctx, &a.wg); err != nil {
		return err
	}
	a.wg.Go(func() { a.rules.loop(a.ctx) })
	if len(a.cfg.Join) > 0 {
		n, err := join(a.gossip, a.cfg.Join)
		var dup *gossip.DuplicateNameError
		if errors.As(err, &dup) {
			return fmt.Errorf("refusing to join: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("could not join any of %v: %v (check the addresses and that those agents run with the same --cluster and --encrypt)", a.cfg.Join, err)
		}
		a.readiness.joined.Store(true)
		a.log.Info("joined cluster", "contacted", n)
	}
	if len(a.cfg.RetryJoin) > 0 {
		a.wg.Go(a.retryJoinLoop)
	}
	if len(rejoin) > 0 {
		a.wg.Go(func() { rejoinLoop(a.ctx, a.gossip, rejoin, func() { a.readiness.joined.Store(true) }, a.log) })
	}
	if a.cfg.DataDir != "" {
		a.wg.Go(func() { saveMembersLoop(a.ctx, a.cfg.DataDir, a.table, a.gossip, a.log) })
		a.wg.Go(func() { a.leases.SaveLoop(a.ctx) })
	}
	a.log.Info("agent started", "gossip", a.gossip.LocalAddr(), "http", a.HTTPAddr(), "profile", a.cfg.Profile)
	return nil
}

func (a *Agent) startGossip() error {
	gc, err := gossip.Profile(a.cfg.Profile)
	if err != nil {
		return err
	}
	mc := gc.Memberlist
	mc.BindAddr, mc.BindPort, _ = splitHostPort(a.cfg.BindAddr)
	if a.cfg.AdvertiseAddr != "" {
		mc.AdvertiseAddr, mc.AdvertisePort, _ = splitHostPort(a.cfg.AdvertiseAddr)
	} else if ip := net.ParseIP(mc.BindAddr); ip != nil && ip.IsUnspecified() {
		if mc.AdvertiseAddr, err = advertiseIP(); err != nil {
			return err
		}
	}
	mc.Label = a.cfg.Cluster
	if a.ring, err = a.keyring(); err != nil {
		return err
	}
	mc.Keyring = a.ring
	if a.cfg.TuneMemberlist != nil {
		a.cfg.TuneMemberlist(mc)
	}
	gc.Table = a.table
	gc.Logger = a.cfg.Logger.With("node", a.cfg.NodeName)
	gc.Metrics = a.metrics
	gc.Tags = a.tags()
	gc.Reincarnated = func(inc uint64) { saveIncarnation(a.cfg.DataDir, a.log, inc) }
	if a.gossip, err = gossip.New(gc); err != nil {
		return err
	}
	a.gossip.HandleQuery("keyring", a.runKeyOp)
	a.gossip.HandleQuery(rememberQuery, a.answerRemember)
	if a.settling {
		a.gossip.Withhold() // until settleRestored
	}
	if err := a.gossip.Start(); err != nil {
		if msg := err.Error(); strings.Contains(msg, "address already in use") { // memberlist keeps only the text
			// Begin with the port and the cause, as a door's taken port does.
			if i := strings.LastIndex(msg, "listen "); i >= 0 {
				msg = msg[i:]
			}
			return fmt.Errorf("gossip port %s: %s (another agent or server may hold it; pick another address with --bind HOST:PORT)", a.cfg.BindAddr, msg)
		}
		return err
	}
	return nil
}

// tags are what peers learn about us: the configured ones plus where our
// API listens.
func (a *Agent) tags() map[string]string {
	t := a.doors.advertised()
	for k, v := range a.cfg.Tags {
		if _, ok := t[k]; !ok {
			t[k] = v
		}
	}
	return t
}

// Run starts the agent and serves until ctx is cancelled or a leave is
// requested over the API; then it leaves gracefully and shuts down.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-a.left:
	}
	return a.Leave(context.Background())
}

// Leave withdraws this agent's routes everywhere by leaving the cluster
// gracefully, then shuts down. It is leaving for good: the registrations
// saved in the data dir are forgotten, so the next start restores none.
func (a *Agent) Leave(ctx context.Context) error {
	a.leaving.Store(true)
	a.freezeLeases(true)
	var err error
	if a.gossip != nil {
		timeout := time.Duration(a.cfg.LeaveTimeout)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
			timeout = time.Until(dl)
		}
		a.log.Info("leaving the cluster")
		err = a.gossip.Leave(timeout)
	}
	return errors.Join(err, a.Shutdown())
}

// Shutdown stops the agent without leaving: peers keep its routes until
// it is back (a restart: with a data dir it republishes them at start) or
// failure detection declares it dead. It saves the registrations one last
// time, then closes the doors in reverse order (the HTTP API first), stops the loops and gossip,
// waits for every goroutine, and last lets go of the data dir's lock.
// Safe to call more than once.
func (a *Agent) Shutdown() error {
	var err error
	a.stopOnce.Do(func() {
		a.leaving.Store(true)
		a.freezeLeases(false)
		a.cancel()
		err = a.doors.close()
		a.metricsL.stop()
		a.discovery.stop()
		a.wg.Wait()
		a.rules.close()
		if a.gossip != nil {
			err = errors.Join(err, a.gossip.Shutdown())
		}
		a.dirLock.release()
		if a.startErr != nil {
			// The cause first: it is what a reader of a failed start needs.
			a.log.Error(a.startErr.Error(), "stopped", "after a failed start")
		} else {
			a.log.Info("agent stopped")
		}
	})
	return err
}

// Done is closed when the agent was asked to leave over the API.
func (a *Agent) Done() <-chan struct{} { return a.left }

// HTTPAddr is the address the agent's API listens on (with the real port
// when configured as 0): the door it publishes to its peers.
func (a *Agent) HTTPAddr() string {
	for _, addr := range a.doors.advertised() {
		return addr
	}
	return ""
}

// GossipAddr is the address peers reach our gossip on.
func (a *Agent) GossipAddr() string {
	if a.gossip == nil {
		return ""
	}
	return a.gossip.LocalAddr()
}

// Ready reports whether the agent has finished its first sync with the
// cluster, so an empty answer means "no such route" rather than "not
// learned yet". A lone agent is ready at once.
func (a *Agent) Ready() bool { return a.readiness.Ready() }

// Addr is the address the door listener named name serves on ("http",
// "rocketmq", "nacos-grpc": a door's name or its second listener's), with
// the real port when configured as 0; "" when that door is off.
func (a *Agent) Addr(name string) string { return a.doors.addr(name) }

// Doors are the listeners of the doors that run, in their order.
func (a *Agent) Doors() []doorkit.Addr { return a.doors.addrs() }

// Door is the running door of type D (*nacos.Server, *zookeeper.Server,
// *httpapi.Server, ...), for operators and tests; the zero D when no such
// door runs.
func Door[D doorkit.Door](a *Agent) D {
	for _, d := range a.doors.list {
		if door, ok := d.door.(D); ok {
			return door
		}
	}
	var zero D
	return zero
}

// Host is what the agent gives every door (package host): changes, views,
// readiness and leases. Nil before Start.
func (a *Agent) Host() host.Host { return a.host }

// MetricsAddr is the address of the --metrics listener ("" when off).
func (a *Agent) MetricsAddr() string { return a.metricsL.addr() }

// Table is the agent's route table (read-only use: views and Wait).
func (a *Agent) Table() *routes.Table { return a.table }

// Gossip is the agent's cluster membership.
func (a *Agent) Gossip() *gossip.Gossip { return a.gossip }

// Name is the agent's node name.
func (a *Agent) Name() string { return a.cfg.NodeName }

// retryJoinLoop keeps trying RetryJoin with exponential backoff up to 30 s
// until a member answers.
func (a *Agent) retryJoinLoop() {
	backoff := time.Second
	for {
		if n, err := join(a.gossip, a.cfg.RetryJoin); n > 0 {
			a.readiness.joined.Store(true)
			a.log.Info("retry-join succeeded", "contacted", n)
			return
		} else {
			a.log.Warn("retry-join failed; will try again", "in", backoff, "err", err)
		}
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}
