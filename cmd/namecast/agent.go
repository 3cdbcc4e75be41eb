package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/internal/memlimit"
	"github.com/namecast/namecast/internal/sdnotify"
)

const agentUsage = `Usage: namecast agent [flags]

Runs a namecast agent: a cluster member that serves the local HTTP API and
web UI, the RocketMQ NameServer protocol, the ZooKeeper and Nacos protocols
(Dubbo's registries), Consul's HTTP API and DNS interface, and on request
Dubbo's Redis and multicast registries (--redis, --multicast), and gossips
routes with every other agent.

  namecast agent --dev                       one member on loopback, default ports
  namecast agent --node b1 --join 10.0.0.2:7946
  namecast agent --discover prod             find peers on the LAN over mDNS

Signals, as Consul servers and Serf treat them:
  SIGINT, "namecast leave"   leave for good: this agent's routes are withdrawn
                             everywhere before it exits, and the saved ones
                             forgotten.
  SIGTERM                    with --data-dir, stop for a restart (systemctl
                             restart, an upgrade): routes stay on every other
                             agent, the restarted agent republishes them, and
                             failure detection withdraws them if it does not
                             come back. Without --data-dir, or with
                             --leave-on-terminate, SIGTERM leaves like SIGINT.
`

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// tagFlag collects repeatable key=value tags.
type tagFlag map[string]string

func (t tagFlag) String() string { return "" }
func (t tagFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("tag %q must be key=value", s)
	}
	t[k] = v
	return nil
}

func runAgent(args []string) int { return runAgentTo(os.Stdout, os.Stderr, args) }

// runAgentTo runs an agent, its help going to stdout, errors and the log
// to stderr.
func runAgentTo(stdout, stderr io.Writer, args []string) int {
	cfg, lg, err := parseAgentFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		// Two lines, as every command's usage errors: the flag list is
		// a --help away.
		fmt.Fprintf(stderr, "namecast agent: %v\nRun 'namecast help agent' for usage.\n", err)
		return 2
	}
	cfg.Logger = lg.logger(stderr)
	cfg.Version = versionString()
	// fail reports why the agent could not start or run, the cause first,
	// in the log's format (one JSON object a line with --log-format json).
	fail := func(code int, err error) int {
		if lg.json {
			cfg.Logger.Error(err.Error(), "exit", code)
		} else {
			fmt.Fprintln(stderr, "namecast agent:", err)
		}
		return code
	}
	// The binary's agent has the process to itself.
	limit, stopLimit, err := memlimit.Apply(cfg.MemoryLimit)
	if err != nil {
		return fail(2, err)
	}
	defer stopLimit()
	cfg.Logger.Info("soft memory limit", "limit", limit)
	a, err := agent.New(cfg)
	if err != nil {
		return fail(1, err)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := serveUntilSignal(a, cfg.Logger, sigs, cfg.DataDir != "" && !cfg.LeaveOnTerminate); err != nil {
		return fail(1, err)
	}
	return 0
}

// logging is how the agent logs: --log-level and --log-format.
type logging struct {
	level slog.Level
	json  bool
}

func (l logging) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.level}
	if l.json {
		// Durations as the text format writes them ("1.5s"), not slog's
		// JSON default, nanoseconds.
		opts.ReplaceAttr = func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				return slog.String(a.Key, a.Value.Duration().String())
			}
			return a
		}
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serveUntilSignal runs the agent until a signal or an API leave. SIGTERM
// with restartOnTerm stops without leaving (routes stay, see agentUsage);
// anything else leaves gracefully.
func serveUntilSignal(a *agent.Agent, log *slog.Logger, sigs <-chan os.Signal, restartOnTerm bool) error {
	if err := a.Start(context.Background()); err != nil {
		return err
	}
	stop := make(chan struct{})
	notified := make(chan struct{})
	go func() {
		defer close(notified)
		notifyReady(a, log, stop)
	}()
	defer func() { close(stop); <-notified }()
	select {
	case sig := <-sigs:
		notify(log, sdnotify.Stopping)
		if sig == syscall.SIGTERM && restartOnTerm {
			log.Info("SIGTERM: stopping for a restart; this agent's routes stay on the others until it is back or declared dead (SIGINT or namecast leave to leave for good)")
			return a.Shutdown()
		}
	case <-a.Done():
		notify(log, sdnotify.Stopping)
	}
	log.Info("leaving the cluster for good")
	return a.Leave(context.Background())
}

// notifyReady tells a supervisor that speaks systemd's notify protocol
// (Type=notify) that the agent is ready once it has synced with the
// cluster, so units ordered after it start against a full table.
func notifyReady(a *agent.Agent, log *slog.Logger, stop <-chan struct{}) {
	if os.Getenv("NOTIFY_SOCKET") == "" {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !a.Ready() {
		select {
		case <-stop:
			return
		case <-a.Done():
			return
		case <-tick.C:
		}
	}
	notify(log, sdnotify.Ready+"\n"+sdnotify.Status(fmt.Sprintf("synced; %d members alive", a.Gossip().AliveMembers())))
}

func notify(log *slog.Logger, state string) {
	if _, err := sdnotify.Notify(state); err != nil {
		log.Warn("could not notify the service manager", "err", err)
	}
}

// parseAgentFlags builds the configuration: defaults (or --dev), then the
// --config file, then flags given on the command line, so a flag always
// wins over the file. --help prints the usage to help and returns
// flag.ErrHelp; a bad flag is only an error, for the caller to print.
func parseAgentFlags(args []string, help io.Writer) (agent.Config, logging, error) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	def := agent.DefaultConfig()
	var (
		dev        = fs.Bool("dev", false, "one member on loopback with the default ports and no data dir")
		configFile = fs.String("config", "", "JSON config `file` (keys as these flags: node, bind, http, ...)")
		logLevel   = fs.String("log-level", "info", "log `level`: debug, info, warn or error")
		logFormat  = fs.String("log-format", "text", "log `format`: text (key=value) or json (one object a line)")
		join       listFlag
		retryJoin  listFlag
		allowHosts listFlag
		tags       = tagFlag{}
		c          agent.Config
	)
	fs.StringVar(&c.NodeName, "node", def.NodeName, "member `name`, unique in the cluster")
	fs.StringVar(&c.BindAddr, "bind", def.BindAddr, "gossip `address` HOST:PORT (UDP and TCP)")
	fs.StringVar(&c.AdvertiseAddr, "advertise", "", "gossip `address` peers should use, if not the bind address")
	fs.StringVar(&c.HTTPAddr, "http", def.HTTPAddr, "HTTP API `address`")
	fs.StringVar(&c.HTTPToken, "http-token", "", "bearer `token` required for write calls")
	fs.BoolVar(&c.HTTPInsecure, "http-insecure", false, "allow write calls without a token on a non-loopback --http")
	fs.Var(&allowHosts, "http-allow-host", "host `name` HTTP requests may use besides localhost and IP addresses (repeatable)")
	fs.StringVar(&c.MetricsAddr, "metrics", "", "read-only `address` HOST:PORT serving only GET /metrics and /v1/health, for Prometheus and probes (default: off)")
	fs.StringVar(&c.RocketMQAddr, "rocketmq", def.RocketMQAddr, "RocketMQ NameServer protocol `address`, or off")
	fs.StringVar(&c.ZooKeeperAddr, "zookeeper", def.ZooKeeperAddr, "ZooKeeper client protocol `address` (Dubbo's zookeeper:// registry), or off")
	fs.StringVar(&c.NacosAddr, "nacos", def.NacosAddr, "Nacos HTTP API `address` (Dubbo's nacos:// registry, Spring Cloud Alibaba); its gRPC is on the port + 1000; or off")
	fs.StringVar(&c.ConsulAddr, "consul", def.ConsulAddr, "Consul HTTP API `address` (Prometheus consul_sd_configs, Traefik, Spring Cloud Consul, consul/api), or off")
	fs.StringVar(&c.DNSAddr, "dns", def.DNSAddr, "Consul DNS interface `address` (UDP and TCP: NAME.service.consul, NODE.node.consul), or off")
	fs.StringVar(&c.RedisAddr, "redis", def.RedisAddr, "Redis protocol `address` (Dubbo's redis:// registry, which expects 127.0.0.1:6379), or off")
	nacosGrace := durationFlag(fs, "nacos-grace", time.Duration(def.NacosGrace), "how long the instances of a Nacos gRPC connection that closed stay, for its client to reconnect and re-register")
	fs.StringVar(&c.MulticastAddr, "multicast", def.MulticastAddr, "Dubbo multicast registry `group` GROUP:PORT this host's Dubbo processes use (Dubbo's default 224.5.6.7:1234), or off")
	fs.StringVar(&c.MulticastInterface, "multicast-interface", "", "network `interface` the multicast door joins its group on (default: the one the host routes the group through)")
	mcProbe := durationFlag(fs, "multicast-probe", time.Duration(def.MulticastProbe), "how often each provider registered by multicast is checked; one whose port refuses connections is withdrawn")
	zkGrace := durationFlag(fs, "zookeeper-grace", time.Duration(def.ZooKeeperGrace), "how long a ZooKeeper session whose connection dropped without closing lives on (at most its timeout)")
	fs.Var(&join, "join", "gossip `address` of a member to join at start (repeatable)")
	fs.Var(&retryJoin, "retry-join", "gossip `address` to keep trying until it answers (repeatable)")
	fs.StringVar(&c.Discover, "discover", "", "find and join agents on the LAN over mDNS under this `name`")
	fs.StringVar(&c.DiscoverInterface, "discover-interface", "", "network `interface` --discover uses (default: the one holding the gossip address)")
	fs.StringVar(&c.Cluster, "cluster", "", "cluster `name`: agents of different clusters never merge")
	fs.StringVar(&c.EncryptKey, "encrypt", "", "base64 gossip encryption `key` (see namecast keygen); visible in ps: prefer --encrypt-file")
	fs.StringVar(&c.EncryptKeyFile, "encrypt-file", "", "`file` holding the gossip encryption key (mode 600; see namecast keygen)")
	fs.StringVar(&c.DataDir, "data-dir", "", "`dir` keeping state across restarts (and routes across a SIGTERM restart)")
	fs.BoolVar(&c.LeaveOnTerminate, "leave-on-terminate", false, "SIGTERM leaves the cluster (as SIGINT) instead of stopping for a restart")
	fs.StringVar(&c.Profile, "profile", def.Profile, "`profile` of timings: lan, wan, local or fast")
	fs.StringVar(&c.MemoryLimit, "memory-limit", def.MemoryLimit, "soft memory `limit` of this process: auto (follows the live heap), off, or a size such as 64MiB (default $GOMEMLIMIT, else auto; see docs/performance.md)")
	fs.IntVar(&c.MaxRecords, "max-records", 0, "most `records` this agent holds for its clients (and of any other agent); past it writes fail through their door (default 250000)")
	fs.IntVar(&c.MaxRecordsMiB, "max-records-mib", 0, "most `MiB` of records this agent holds for its clients (and of any other agent); past it writes fail through their door (default 256)")
	fs.Var(tags, "tag", "`key=value` published with this member (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(help, agentUsage)
			fs.SetOutput(help)
			printFlags(fs)
		}
		return agent.Config{}, logging{}, err
	}
	if fs.NArg() > 0 {
		return agent.Config{}, logging{}, fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	cfg := def
	if *dev {
		cfg = agent.DevConfig()
	}
	if *configFile != "" {
		if err := agent.LoadFile(*configFile, &cfg); err != nil {
			return agent.Config{}, logging{}, err
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	overlay := map[string]func(){
		"node": func() { cfg.NodeName = c.NodeName }, "bind": func() { cfg.BindAddr = c.BindAddr },
		"advertise": func() { cfg.AdvertiseAddr = c.AdvertiseAddr }, "http": func() { cfg.HTTPAddr = c.HTTPAddr },
		"http-token": func() { cfg.HTTPToken = c.HTTPToken }, "http-insecure": func() { cfg.HTTPInsecure = c.HTTPInsecure },
		"rocketmq": func() { cfg.RocketMQAddr = c.RocketMQAddr }, "join": func() { cfg.Join = join },
		"zookeeper": func() { cfg.ZooKeeperAddr = c.ZooKeeperAddr }, "zookeeper-grace": func() { cfg.ZooKeeperGrace = agent.Duration(*zkGrace) },
		"nacos": func() { cfg.NacosAddr = c.NacosAddr }, "consul": func() { cfg.ConsulAddr = c.ConsulAddr }, "dns": func() { cfg.DNSAddr = c.DNSAddr }, "nacos-grace": func() { cfg.NacosGrace = agent.Duration(*nacosGrace) },
		"redis":     func() { cfg.RedisAddr = c.RedisAddr },
		"multicast": func() { cfg.MulticastAddr = c.MulticastAddr }, "multicast-interface": func() { cfg.MulticastInterface = c.MulticastInterface },
		"multicast-probe": func() { cfg.MulticastProbe = agent.Duration(*mcProbe) },
		"retry-join":      func() { cfg.RetryJoin = retryJoin }, "discover": func() { cfg.Discover = c.Discover },
		"discover-interface": func() { cfg.DiscoverInterface = c.DiscoverInterface },
		"cluster":            func() { cfg.Cluster = c.Cluster }, "encrypt": func() { cfg.EncryptKey = c.EncryptKey },
		"encrypt-file": func() { cfg.EncryptKeyFile = c.EncryptKeyFile },
		"data-dir":     func() { cfg.DataDir = c.DataDir }, "profile": func() { cfg.Profile = c.Profile },
		"tag": func() { cfg.Tags = tags }, "http-allow-host": func() { cfg.HTTPAllowHosts = allowHosts },
		"leave-on-terminate": func() { cfg.LeaveOnTerminate = c.LeaveOnTerminate },
		"memory-limit":       func() { cfg.MemoryLimit = c.MemoryLimit },
		"metrics":            func() { cfg.MetricsAddr = c.MetricsAddr },
		"max-records":        func() { cfg.MaxRecords = c.MaxRecords },
		"max-records-mib":    func() { cfg.MaxRecordsMiB = c.MaxRecordsMiB },
	}
	for name, apply := range overlay {
		if set[name] {
			apply()
		}
	}
	var lg logging
	if err := lg.level.UnmarshalText([]byte(*logLevel)); err != nil {
		return agent.Config{}, logging{}, fmt.Errorf("--log-level %q: use debug, info, warn or error", *logLevel)
	}
	switch *logFormat {
	case "text":
	case "json":
		lg.json = true
	default:
		return agent.Config{}, logging{}, fmt.Errorf("--log-format %q: use text or json", *logFormat)
	}
	return cfg, lg, nil
}
