package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/agent/consul"
	"github.com/namecast/namecast/agent/dns"
	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/multicast"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/agent/redis"
	"github.com/namecast/namecast/agent/rocketmq"
	"github.com/namecast/namecast/agent/zookeeper"
	"github.com/namecast/namecast/internal/memlimit"
)

// DefaultGossipAddr is where gossip listens by default (README: gossip
// 7946; each door's default address is its package's DefaultAddr).
const DefaultGossipAddr = "0.0.0.0:7946"

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
	// The doors, in the order they start and in reverse the order they
	// close (package doorkit): each embeds its settings, whose JSON keys
	// are the config file's.
	rocketmq.RocketMQSettings
	zookeeper.ZooKeeperSettings
	nacos.NacosSettings
	consul.ConsulSettings
	multicast.MulticastSettings
	dns.DNSSettings
	redis.RedisSettings
	httpapi.HTTPSettings

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
	// Listen, when set, binds the door listener named door ("http",
	// "rocketmq", "zookeeper", "nacos", "nacos-grpc": a door's name or its
	// second listener's) at addr, instead of TCP: tests hand the doors
	// in-memory listeners here (package doorkit).
	Listen func(door, addr string) (net.Listener, error) `json:"-"`
	// Version is the binary's version, shown by GET /v1/agent; empty: the
	// module version from the build info.
	Version string `json:"-"`
}

// DefaultConfig is the configuration of a production agent.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	c := Config{
		NodeName:     host,
		BindAddr:     DefaultGossipAddr,
		Profile:      "lan",
		LeaveTimeout: Duration(5 * time.Second),
	}
	for _, d := range c.Doors() {
		d.Defaults()
	}
	return c
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
	if _, _, err := splitHostPort(c.BindAddr); err != nil {
		return fmt.Errorf("--bind %q: %v", c.BindAddr, err)
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
	for _, d := range c.Doors() {
		if err := d.Validate(); err != nil {
			return err
		}
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

var (
	splitHostPort = doorkit.SplitHostPort
	isLoopback    = doorkit.IsLoopback
)

// Duration is a time.Duration that reads "30s" from JSON.
type Duration = doorkit.Duration
