package gossip

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// Config is what a Gossip needs. Zero durations take the profile's values.
type Config struct {
	// Table is the replicated state; its Local name is the member name.
	Table *routes.Table
	// Memberlist is the SWIM configuration, normally from Profile. Name,
	// delegates and Label are set by Gossip; bind, advertise, transport
	// and keyring are the caller's.
	Memberlist *memberlist.Config
	// Tags are published as this member's metadata (512 bytes in all).
	Tags map[string]string
	// AntiEntropyInterval is how often a digest summary goes to one random
	// peer. Shorter repairs a missed op sooner, at ~60 bytes per tick.
	AntiEntropyInterval time.Duration
	// PullGrace is how long a detected gap may stay open before we pull:
	// long enough for in-flight gossip to close it, short against the
	// one-second repair goal.
	PullGrace time.Duration
	// ReconnectInterval is how often the cluster as a whole re-joins each
	// recently failed member: every interval a member tries one with
	// probability failed/alive, as Serf does (reconnect.go);
	// ReconnectTimeout is how long failed members are remembered for it.
	ReconnectInterval time.Duration
	ReconnectTimeout  time.Duration
	// MaxGossipOps is the largest change sent as individual ops; a larger
	// one is announced and pulled, so a 1000-topic registration does not
	// flood the broadcast queue.
	MaxGossipOps int
	// MaxQueuedBroadcasts bounds the gossip queue. Past it the broadcasts
	// sent most often, then the oldest, are dropped: peers that missed
	// them pull the change by anti-entropy instead. Without a bound,
	// changes arriving faster than gossip can spread them (each op is sent
	// RetransmitMult·log10(N+1) times, a dozen or so per packet) grow the
	// queue, and every member's, since members relay what they learn,
	// without limit.
	MaxQueuedBroadcasts int
	// Streams bounds what peers can make this member hold with incoming
	// gossip streams (see streams.go); zero fields take defaults.
	Streams StreamLimits
	// Reincarnated, if set, is told the new incarnation when a peer's
	// records show an earlier run of this agent with a higher one (its
	// clock was ahead), so a data dir can keep it for the next start.
	Reincarnated func(inc uint64)
	Logger       *slog.Logger
	Metrics      *metrics.Metrics

	// plainPushPull: tests measuring what compressing push/pull saves.
	plainPushPull bool
}

// Profile returns the memberlist configuration and gossip timings of a named
// profile: "lan" (memberlist's LAN defaults), "wan", "local" (loopback,
// fastest) or "fast" (LAN with quicker failure detection: about 2.5x the
// probe traffic of lan for roughly a third of the time to declare a member
// dead).
func Profile(name string) (Config, error) {
	c := Config{MaxGossipOps: 64, MaxQueuedBroadcasts: 1024}
	switch name {
	case "lan", "":
		c.Memberlist = memberlist.DefaultLANConfig()
		c.AntiEntropyInterval, c.PullGrace, c.ReconnectInterval = time.Second, 500*time.Millisecond, 5*time.Second
	case "fast":
		c.Memberlist = memberlist.DefaultLANConfig()
		c.Memberlist.ProbeInterval = 400 * time.Millisecond
		c.Memberlist.ProbeTimeout = 200 * time.Millisecond
		c.Memberlist.SuspicionMult = 2
		c.Memberlist.GossipInterval = 100 * time.Millisecond
		c.AntiEntropyInterval, c.PullGrace, c.ReconnectInterval = 500*time.Millisecond, 250*time.Millisecond, 3*time.Second
	case "wan":
		c.Memberlist = memberlist.DefaultWANConfig()
		c.AntiEntropyInterval, c.PullGrace, c.ReconnectInterval = 5*time.Second, 2*time.Second, 30*time.Second
	case "local":
		c.Memberlist = memberlist.DefaultLocalConfig()
		c.AntiEntropyInterval, c.PullGrace, c.ReconnectInterval = 500*time.Millisecond, 250*time.Millisecond, 2*time.Second
	default:
		return Config{}, fmt.Errorf("unknown profile %q: use lan, wan, local or fast", name)
	}
	c.ReconnectTimeout = 24 * time.Hour
	// memberlist compresses every packet it sends, pings and acks too,
	// each with a fresh 64 KiB LZW table, and keeps the result only when
	// smaller (rarely, for a probe). On a LAN that is most of a join
	// storm's CPU, enough to push a large cluster starting at once into
	// false deaths (docs/bench/history.md).
	// Receivers read either, so a mixed cluster is fine. The two large
	// messages are compressed without it: snapshots by namecast
	// (parts.go), memberlist's push/pull of the member list by the
	// transport (pushpull.go). WAN links keep it: bytes cost more there
	// than CPU.
	c.Memberlist.EnableCompression = name == "wan"
	// A restarted agent on a new address may reclaim its name this soon
	// after it was declared dead, instead of being refused as a conflict.
	c.Memberlist.DeadNodeReclaimTime = 10 * time.Second
	return c, nil
}

func (c *Config) validate() error {
	if c.Table == nil {
		return fmt.Errorf("gossip: Config.Table is required")
	}
	if c.Memberlist == nil {
		return fmt.Errorf("gossip: Config.Memberlist is required (start from gossip.Profile)")
	}
	d, _ := Profile("lan")
	if c.AntiEntropyInterval <= 0 {
		c.AntiEntropyInterval = d.AntiEntropyInterval
	}
	if c.PullGrace <= 0 {
		c.PullGrace = c.AntiEntropyInterval / 2
	}
	if c.ReconnectInterval <= 0 {
		c.ReconnectInterval = d.ReconnectInterval
	}
	if c.ReconnectTimeout <= 0 {
		c.ReconnectTimeout = d.ReconnectTimeout
	}
	if c.MaxGossipOps <= 0 {
		c.MaxGossipOps = d.MaxGossipOps
	}
	if c.MaxQueuedBroadcasts <= 0 {
		c.MaxQueuedBroadcasts = d.MaxQueuedBroadcasts
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		mc := metrics.DefaultConfig("namecast")
		mc.EnableRuntimeMetrics = false // it would start a goroutine per Gossip
		c.Metrics, _ = metrics.New(mc, &metrics.BlackholeSink{})
	}
	return nil
}
