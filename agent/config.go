package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/agent/rocketmq"
	"github.com/namecast/namecast/agent/zookeeper"
	"github.com/namecast/namecast/internal/memlimit"
)

// Default addresses (README: gossip 7946, HTTP 7947, RocketMQ 9876,
// ZooKeeper 2181, Nacos 8848 and its gRPC 9848).
const (
	DefaultGossipAddr    = "0.0.0.0:7946"
	DefaultHTTPAddr      = "127.0.0.1:7947"
	DefaultRocketMQAddr  = "127.0.0.1:9876"
	DefaultZooKeeperAddr = "127.0.0.1:2181"
	DefaultNacosAddr     = "127.0.0.1:8848"
	// DefaultZooKeeperGrace is how long a ZooKeeper session whose client
	// connection dropped without closeSession survives (see ZooKeeperGrace).
	DefaultZooKeeperGrace = 5 * time.Second
	// DefaultNacosGrace is how long the ephemeral instances of a Nacos
	// gRPC connection that closed stay (see NacosGrace): the ZooKeeper
	// door's default.
	DefaultNacosGrace = 5 * time.Second
)

// Config is everything an agent needs. The JSON names are those of the
// config file (--config) and match the command-line flags.
type Config struct {
	// NodeName names this member and the origin of its records; it must be
	// unique in the cluster. Default: the host name.
	NodeName string `json:"node"`
	// BindAddr is the gossip address (UDP and TCP). AdvertiseAddr is what
	// peers are told to use, when different (NAT, 0.0.0.0 binds).
	BindAddr      string `json:"bind"`
	AdvertiseAddr string `json:"advertise"`
	// HTTPAddr serves the API. Binding it off loopback exposes writes to
	// the network, so it then requires HTTPToken or HTTPInsecure.
	HTTPAddr     string `json:"http"`
	HTTPToken    string `json:"http_token"`
	HTTPInsecure bool   `json:"http_insecure"`
	// HTTPAllowHosts are host names, beyond localhost and IP addresses of
	// this host, that requests may name in their Host header (a DNS name
	// the agent is reached by). Any other name is refused, so a web page
	// cannot reach the API by rebinding its own name to 127.0.0.1.
	HTTPAllowHosts []string `json:"http_allow_host"`
	// RocketMQAddr serves the RocketMQ NameServer protocol; "off" disables.
	RocketMQAddr string `json:"rocketmq"`
	// ZooKeeperAddr serves the ZooKeeper client protocol (Dubbo's
	// zookeeper:// registry); "off" disables.
	ZooKeeperAddr string `json:"zookeeper"`
	// NacosAddr serves Nacos' 1.x HTTP API, and its 2.x gRPC on the same
	// host at the port + 1000 (what Nacos 2.x clients assume); "off"
	// disables. Port 0 picks two free ports (tests).
	NacosAddr string `json:"nacos"`
	// ZooKeeperGrace bounds how long a session whose connection closed
	// without closeSession lives on: min(session timeout, grace). Clients
	// sit on the agent's host, so a dropped connection means a dead
	// process; Dubbo's 60 s session timeout would keep a crashed provider
	// listed for a minute.
	ZooKeeperGrace Duration `json:"zookeeper_grace"`
	// ZooKeeperDeleteHold is how long the delete of an ephemeral znode waits
	// before other agents hear of it, so a delete and re-create of the same
	// path (curator-x-discovery and dubbo-go re-register that way) shows
	// them no gap; the price is a real unregister reaching them that much
	// later. Default 500ms (config file only).
	ZooKeeperDeleteHold Duration `json:"zookeeper_delete_hold"`
	// ZooKeeperMaxClientConns bounds the ZooKeeper connections open at once
	// from one client IP (ZooKeeper's maxClientCnxns); 0: its default, 60.
	// Every client on this host shares 127.0.0.1, so a host with more
	// ZooKeeper clients needs more; negative: no bound.
	ZooKeeperMaxClientConns int `json:"zookeeper_max_client_conns"`
	// RocketMQMaxConns bounds the RocketMQ connections open at once, and
	// RocketMQMaxConnsPerIP those from one client IP; 0: the defaults,
	// 10,000 and 1,000; negative: no bound. A RocketMQ client process
	// keeps one connection to its NameServer, so these stop a flood, not
	// real use; every client on this host shares 127.0.0.1.
	RocketMQMaxConns      int `json:"rocketmq_max_conns"`
	RocketMQMaxConnsPerIP int `json:"rocketmq_max_conns_per_ip"`
	// HTTPMaxConns bounds the HTTP API's connections open at once (each
	// blocking query holds one for up to its wait); 0: the default,
	// 10,000; negative: no bound.
	HTTPMaxConns int `json:"http_max_conns"`
	// NacosGrace is how long the ephemeral instances of a Nacos gRPC
	// connection that closed (its process exited or was killed, or the
	// agent restarted) stay: a client that reconnects and re-registers
	// within it (Nacos clients redo their registrations on reconnect)
	// shows its consumers no gap; otherwise they are withdrawn. Its own
	// flag, not --zookeeper-grace: the doors serve different clients, and
	// Nacos' own server withdraws at once, so an operator may want it
	// shorter.
	NacosGrace Duration `json:"nacos_grace"`
	// Join lists members to join at start (failure is fatal); RetryJoin
	// lists members to keep trying, with backoff, until one answers.
	Join      []string `json:"join"`
	RetryJoin []string `json:"retry_join"`
	// Discover finds peers on the LAN over mDNS under this service name.
	Discover string `json:"discover"`
	// DiscoverInterface is the network interface mDNS uses; default: the
	// one holding the gossip address.
	DiscoverInterface string `json:"discover_interface"`
	// Cluster is memberlist's label: agents of different clusters never
	// merge, even when they find each other.
	Cluster string `json:"cluster"`
	// EncryptKey is a base64 AES key (16, 24 or 32 bytes) for gossip.
	EncryptKey string `json:"encrypt"`
	// EncryptKeyFile is a file holding EncryptKey (--encrypt-file), so the
	// key is on no command line; New reads it and refuses it when others
	// can read it (keyfile.go).
	EncryptKeyFile string `json:"encrypt_file"`
	// MetricsAddr, when set, is a read-only listener serving only GET
	// /metrics and GET /v1/health (--metrics), for Prometheus on another
	// host and for probes, without opening the HTTP API.
	MetricsAddr string `json:"metrics"`
	// DataDir keeps state across restarts; empty keeps nothing. With it,
	// the registrations this agent carries survive a restart without a gap
	// on any other agent (package agent/lease).
	DataDir string `json:"data_dir"`
	// RulesLimit bounds the cluster-scoped rules (persistent URLs,
	// persistent znodes, KV config) this agent's doors accept, in bytes of
	// keys and contents in all; 0 means DefaultRulesLimit (32 MiB). Every
	// agent holds every rule in memory and in its data dir, so a bound
	// too high lets one client fill every agent; a write past it fails
	// through its door and changes nothing.
	RulesLimit int `json:"rules_limit"`
	// MaxRecords and MaxRecordsMiB bound the records this agent's doors
	// hold for their clients (its own origin): their number, and their
	// size in MiB (keys and contents, routes.RecordSize); 0 means
	// DefaultMaxRecords and DefaultMaxRecordsMiB. Every agent holds every
	// agent's records, so without a bound one client fills them all. A
	// write past either fails through its door and changes nothing; a
	// delete, or a replacement no larger, always works. Every agent also
	// holds no more of any other agent than its own bounds (give every
	// agent the same), so one faulty agent cannot fill the others.
	MaxRecords    int `json:"max_records"`
	MaxRecordsMiB int `json:"max_records_mib"`
	// LeaveOnTerminate makes SIGTERM leave the cluster (withdraw every
	// route now, forget the saved registrations) instead of stopping for
	// a restart. Without a data dir SIGTERM always leaves: there is
	// nothing to restart from. SIGINT and "namecast leave" always leave.
	LeaveOnTerminate bool `json:"leave_on_terminate"`
	// MemoryLimit is the soft memory limit the namecast binary sets for its
	// process (--memory-limit, package internal/memlimit): auto, off, or a
	// size such as 64MiB; empty: GOMEMLIMIT if set, else auto. Agents embedded in another program leave the process's settings to it.
	MemoryLimit string `json:"memory_limit"`
	// Profile picks failure-detection and gossip timings: lan, wan, local
	// or fast (see gossip.Profile).
	Profile string `json:"profile"`
	// Tags are published with this member (role, zone, ...).
	Tags map[string]string `json:"tags"`
	// LeaveTimeout bounds how long a graceful leave waits for the news to
	// spread before the agent exits.
	LeaveTimeout Duration `json:"leave_timeout"`

	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger `json:"-"`
	// TuneMemberlist, when set, adjusts the memberlist configuration last
	// (tests inject transports and faster timings here).
	TuneMemberlist func(*memberlist.Config) `json:"-"`
	// Listen, when set, binds the listener of the door named by its flag
	// ("http", "rocketmq", "zookeeper", "nacos", "nacos-grpc") at addr, instead of TCP: tests
	// hand the doors in-memory listeners here (package agent, doors.go).
	Listen func(door, addr string) (net.Listener, error) `json:"-"`
	// Version is the binary's version, shown by GET /v1/agent; empty: the
	// module version from the build info.
	Version string `json:"-"`
}

// DefaultConfig is the configuration of a production agent.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		NodeName:       host,
		BindAddr:       DefaultGossipAddr,
		HTTPAddr:       DefaultHTTPAddr,
		RocketMQAddr:   DefaultRocketMQAddr,
		ZooKeeperAddr:  DefaultZooKeeperAddr,
		NacosAddr:      DefaultNacosAddr,
		ZooKeeperGrace: Duration(DefaultZooKeeperGrace),
		NacosGrace:     Duration(DefaultNacosGrace),
		Profile:        "lan",
		LeaveTimeout:   Duration(5 * time.Second),
	}
}

// DevConfig is a single member on loopback with the default ports and no
// data dir: `namecast agent --dev`.
func DevConfig() Config {
	c := DefaultConfig()
	c.BindAddr = "127.0.0.1:7946"
	c.Profile = "local"
	return c
}

// LoadFile overlays the JSON config file at path onto c. Unknown keys are
// errors, so a typo does not silently fall back to a default.
func LoadFile(path string, c *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading config file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// validate checks c and returns the first problem, phrased as a fix.
func (c *Config) validate() error {
	if c.NodeName == "" {
		return fmt.Errorf("node name is empty: set --node")
	}
	if len(c.NodeName) > 128 {
		return fmt.Errorf("node name %q is longer than 128 characters", c.NodeName)
	}
	if strings.HasPrefix(c.NodeName, "~") {
		return fmt.Errorf("node name %q: names starting with '~' are reserved", c.NodeName)
	}
	for name, addr := range map[string]string{"--bind": c.BindAddr, "--http": c.HTTPAddr} {
		if _, _, err := splitHostPort(addr); err != nil {
			return fmt.Errorf("%s %q: %v", name, addr, err)
		}
	}
	if c.MetricsAddr != "" {
		if _, _, err := splitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("--metrics %q: %v", c.MetricsAddr, err)
		}
	}
	if c.AdvertiseAddr != "" {
		if _, _, err := splitHostPort(c.AdvertiseAddr); err != nil {
			return fmt.Errorf("--advertise %q: %v", c.AdvertiseAddr, err)
		}
	}
	if c.RocketMQAddr != "" && c.RocketMQAddr != "off" {
		if _, _, err := splitHostPort(c.RocketMQAddr); err != nil {
			return fmt.Errorf("--rocketmq %q: %v (or \"off\")", c.RocketMQAddr, err)
		}
	}
	if c.ZooKeeperAddr != "" && c.ZooKeeperAddr != "off" {
		if _, _, err := splitHostPort(c.ZooKeeperAddr); err != nil {
			return fmt.Errorf("--zookeeper %q: %v (or \"off\")", c.ZooKeeperAddr, err)
		}
	}
	if c.NacosAddr != "" && c.NacosAddr != "off" {
		if _, _, err := splitHostPort(c.NacosAddr); err != nil {
			return fmt.Errorf("--nacos %q: %v (or \"off\")", c.NacosAddr, err)
		}
		if _, err := nacos.GRPCAddr(c.NacosAddr); err != nil { // the gRPC port, +1000, must be a port
			return fmt.Errorf("--nacos %q: %v", c.NacosAddr, err)
		}
	}
	if c.MemoryLimit != "" {
		if _, err := memlimit.Parse(c.MemoryLimit); err != nil {
			return err
		}
	}
	if c.MaxRecords < 0 {
		return fmt.Errorf("--max-records %d must not be negative (0: the default, %d)", c.MaxRecords, DefaultMaxRecords)
	}
	if c.MaxRecordsMiB < 0 || c.MaxRecordsMiB > 1<<20 {
		return fmt.Errorf("--max-records-mib %d must be 0 (the default, %d) to %d", c.MaxRecordsMiB, DefaultMaxRecordsMiB, 1<<20)
	}
	if c.RulesLimit < 0 {
		return fmt.Errorf("rules_limit %d must not be negative (0: the default, %d)", c.RulesLimit, DefaultRulesLimit)
	}
	if c.ZooKeeperGrace < 0 {
		return fmt.Errorf("--zookeeper-grace %v must not be negative", time.Duration(c.ZooKeeperGrace))
	}
	if c.NacosGrace < 0 {
		return fmt.Errorf("--nacos-grace %v must not be negative", time.Duration(c.NacosGrace))
	}
	if c.ZooKeeperDeleteHold < 0 {
		return fmt.Errorf("zookeeper_delete_hold %v must not be negative", time.Duration(c.ZooKeeperDeleteHold))
	}
	// Zero means the default; the default is written in, so /v1/agent and
	// the web UI show the value in force, not 0s.
	if c.ZooKeeperGrace == 0 {
		c.ZooKeeperGrace = Duration(DefaultZooKeeperGrace)
	}
	if c.NacosGrace == 0 {
		c.NacosGrace = Duration(DefaultNacosGrace)
	}
	if c.ZooKeeperDeleteHold == 0 {
		c.ZooKeeperDeleteHold = Duration(zookeeper.DefaultDeleteHold)
	}
	if c.RulesLimit == 0 {
		c.RulesLimit = DefaultRulesLimit
	}
	if c.MaxRecords == 0 {
		c.MaxRecords = DefaultMaxRecords
	}
	if c.MaxRecordsMiB == 0 {
		c.MaxRecordsMiB = DefaultMaxRecordsMiB
	}
	if c.HTTPMaxConns == 0 {
		c.HTTPMaxConns = httpapi.DefaultMaxConns
	}
	if c.RocketMQMaxConns == 0 {
		c.RocketMQMaxConns = rocketmq.DefaultMaxConns
	}
	if c.RocketMQMaxConnsPerIP == 0 {
		c.RocketMQMaxConnsPerIP = rocketmq.DefaultMaxConnsPerIP
	}
	if host, _, _ := splitHostPort(c.HTTPAddr); !isLoopback(host) && c.HTTPToken == "" && !c.HTTPInsecure {
		return fmt.Errorf("--http %s is reachable from the network: set --http-token for write calls, or --http-insecure to allow anyone to register", c.HTTPAddr)
	}
	for _, h := range c.HTTPAllowHosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			return fmt.Errorf("--http-allow-host %q must be a bare host name, without port or scheme, like namecast.internal", h)
		}
	}
	if c.EncryptKey != "" && c.EncryptKeyFile != "" {
		return fmt.Errorf("--encrypt and --encrypt-file both give the gossip key: keep --encrypt-file (a key on the command line is visible to every user of the host)")
	}
	if c.EncryptKey != "" {
		if _, err := decodeKey(c.EncryptKey); err != nil {
			return fmt.Errorf("--encrypt: %w", err)
		}
	}
	if c.Discover != "" && !discoverName.MatchString(c.Discover) {
		return fmt.Errorf("--discover %q must be 1-40 letters, digits or '-', starting with a letter or digit", c.Discover)
	}
	if c.LeaveTimeout <= 0 {
		c.LeaveTimeout = Duration(5 * time.Second)
	}
	return nil
}

func splitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("want HOST:PORT: %v", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return host, p, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Duration is a time.Duration that reads "30s" from JSON.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
