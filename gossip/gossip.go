package gossip

import (
	"fmt"
	"log"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"

	"github.com/namecast/namecast/routes"
)

// TagIncarnation is the tag carrying the agent's incarnation, so peers drop
// a restarted agent's old records even when it has registered nothing yet.
const TagIncarnation = "inc"

// Gossip replicates one routes.Table over memberlist.
type Gossip struct {
	cfg   Config
	table *routes.Table
	name  string
	log   *slogLogger
	m     *metrics.Metrics
	meta  atomic.Pointer[[]byte] // our tags, incarnation included

	ml      atomic.Pointer[memberlist.Memberlist]
	streams *limitedTransport // bounds incoming streams (streams.go)
	queue   *memberlist.TransmitLimitedQueue
	light   *memberlist.TransmitLimitedQueue // relays of direct pushes (direct.go)
	queueMu sync.Mutex                       // serialises enqueue's prune-then-add, and QueuedBroadcasts' read
	push    budget                           // eager pushes (push.go)
	direct  budget                           // direct pushes (direct.go)
	askJoin budget                           // summaries sent to members seen joining (members.go)
	coord   *coordinate.Client

	// fate serialises every change of a member's liveness with its effect
	// on the table (drop, admit), so the two always agree; it is taken
	// before mu, never while holding it.
	fate    sync.Mutex
	mu      sync.Mutex
	members map[string]*member
	// down names the members that are not alive, so the reconnect tick
	// looks at those only, not at thousands of alive ones.
	down    map[string]struct{}
	pending map[string]pendingPull // by origin
	// pullAt is when the pull loop next looks at pending; zero: never,
	// until kicked.
	pullAt time.Time
	// lonely is who we knew after a join whose answer listed too few
	// members to spread our arrival; nil otherwise (lonelyjoin.go).
	lonely *lonelyJoin
	// repair tracks origins peers list that we never knew as members
	// (viewrepair.go).
	repair viewRepair
	// ackSummaryAt is when a probe ack last brought a peer's summary
	// (unix ns): while they come, no separate summary packets are sent.
	ackSummaryAt atomic.Int64
	// ackSummary is our summary as last computed, which acks carry.
	ackSummary atomic.Uint64
	q          queries
	// joining counts Join calls under way; duplicate is the live member
	// of our name one of them found (duplicate.go).
	joining   atomic.Int32
	duplicate atomic.Pointer[DuplicateNameError]
	// withheld leaves our own origin out of our digests (withhold.go).
	withheld atomic.Bool

	// afterAliveCheck, if set (tests), runs between the check that an
	// origin is alive and the apply of its ops or snapshot.
	afterAliveCheck func(origin string)
	// sentReliable, if set (tests), sees every message sent over TCP.
	sentReliable func(msg []byte)
	// sentConfirm, if set (tests), sees every death confirmation sent.
	sentConfirm func(to string)
	// askedJoin, if set (tests), sees every member seen joining that is
	// asked what it holds (members.go).
	askedJoin func(member string)
	// beforeLocalState, if set (tests), runs as a push/pull sends our
	// state, after memberlist took its list of members for it.
	beforeLocalState func(join bool)
	// notified, if set (tests), runs as memberlist tells us of a member's
	// join or update, holding its node lock, before we take any of ours.
	notified func(member string)

	work chan func()
	// pullNow wakes the pull loop, which otherwise sleeps until the
	// earliest gap it knew of is due (kickPulls).
	pullNow chan struct{}
	// waitingAnswers counts answers waiting for their member (answer.go).
	waitingAnswers atomic.Int64
	checks         chan deathCheck
	stop           chan struct{}
	wg             sync.WaitGroup
	loopMu         sync.Mutex // orders goLoop's Adds with Shutdown's Wait
	stopping       bool       // under loopMu: Shutdown has begun
	stopOnce       sync.Once
	started        bool
}

// New checks cfg and prepares a Gossip; nothing listens until Start.
func New(cfg Config) (*Gossip, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// The incarnation may grow to 20 digits (incarnation.go): check the
	// tags fit with the longest.
	if meta := metaFor(cfg.Tags, math.MaxUint64); len(meta) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("gossip: tags encode to %d bytes, over memberlist's %d-byte limit: shorten them", len(meta), memberlist.MetaMaxSize)
	}
	coord, err := coordinate.NewClient(coordinate.DefaultConfig())
	if err != nil {
		return nil, err
	}
	g := &Gossip{
		cfg: cfg, table: cfg.Table, name: cfg.Table.Local(),
		log: &slogLogger{cfg.Logger}, m: cfg.Metrics, coord: coord,
		members: map[string]*member{}, down: map[string]struct{}{}, pending: map[string]pendingPull{},
		work: make(chan func(), 1024), pullNow: make(chan struct{}, 1), checks: make(chan deathCheck, 256), stop: make(chan struct{}),
		push:    budget{rate: pushRate, burst: pushBurst},
		direct:  budget{rate: directRate, burst: directBurst},
		askJoin: budget{rate: askJoinRate, burst: askJoinBurst},
	}
	meta := metaFor(cfg.Tags, cfg.Table.LocalInc())
	g.meta.Store(&meta)
	g.queue = &memberlist.TransmitLimitedQueue{NumNodes: g.numMembers, RetransmitMult: cfg.Memberlist.RetransmitMult}
	g.light = &memberlist.TransmitLimitedQueue{NumNodes: g.numMembers, RetransmitMult: directLightMult}
	// Counters that alerts take a rate of exist at 0 from the start, so
	// the first increment is a visible change (contrib/prometheus).
	g.m.IncrCounter([]string{"gossip", "messages", "malformed"}, 0)
	g.m.IncrCounter([]string{"gossip", "work", "dropped"}, 0)
	return g, nil
}

// Start creates the memberlist (binding its ports) and starts the
// anti-entropy, pull and reconnect loops.
func (g *Gossip) Start() error {
	mc := *g.cfg.Memberlist
	mc.Name = g.name
	mc.Delegate = (*delegate)(g)
	mc.Events = (*events)(g)
	mc.Ping = (*pings)(g)
	mc.Merge = (*merge)(g)
	if mc.Logger == nil && mc.LogOutput == nil {
		mc.Logger = log.New(g.log.writer(), "", 0)
	}
	lt, err := g.limitStreams(&mc)
	if err != nil {
		return fmt.Errorf("starting gossip on %s:%d: %w", mc.BindAddr, mc.BindPort, err)
	}
	g.streams = lt
	ml, err := memberlist.Create(&mc)
	if err != nil {
		_ = lt.Shutdown()
		return fmt.Errorf("starting gossip on %s:%d: %w", mc.BindAddr, mc.BindPort, err)
	}
	g.ml.Store(ml)
	g.started = true
	g.goLoop(g.worker)
	g.goLoop(g.antiEntropyLoop)
	g.goLoop(g.pullLoop)
	g.goLoop(g.reconnectLoop)
	g.goLoop(g.confirmLoop)
	return nil
}

// Join contacts the given gossip addresses (host:port) and merges with
// their cluster; it returns how many answered.
func (g *Gossip) Join(addrs []string) (int, error) {
	ml := g.ml.Load()
	if ml == nil {
		return 0, fmt.Errorf("gossip: not started")
	}
	g.joining.Add(1)
	n, err := ml.Join(addrs)
	g.joining.Add(-1)
	if dup := g.duplicate.Swap(nil); dup != nil {
		return 0, dup
	}
	if n > 0 {
		g.noteJoin(time.Now())
	}
	return n, err
}

// Publish spreads a local delta made by routes.Table.ApplyLocal.
func (g *Gossip) Publish(d routes.Delta) {
	if len(d.Ops) == 0 {
		return
	}
	if len(d.Ops) > g.cfg.MaxGossipOps {
		g.announce(d.Origin)
		return
	}
	// Sent to every member at once if the budget allows (direct.go); the
	// ops are queued all the same, and pushed epidemically only if not.
	direct := g.publishDirect(d)
	for _, op := range d.Ops {
		msg := encode(msgOps, routes.Delta{Origin: d.Origin, Inc: d.Inc, Ops: []routes.Op{op}})
		if !g.queueOp(d.Origin+"\x00"+op.Key, msg, g.queue, !direct) {
			// Not queued: the members the push missed learn of it from
			// our digest entry and pull.
			g.announce(d.Origin)
		}
	}
}

// spread sends one op message on its ways: into the gossip queue when it
// shares a packet well (at most half of one: a bigger one would hog the
// ticks' packets), and at once in a packet of its own (pushNow) when it
// fits one. A Dubbo URL is typically 300-1,000 bytes, so its op is over
// half a packet: it is pushed, not queued. It reports whether the message
// was queued; one that was not is announced (a notice of its origin) by
// its origin and by every member that relays it.
//
// An op relayed from a direct push (light) goes to the light queue and is
// not pushed (direct.go).
func (g *Gossip) spread(name string, msg []byte, light bool) (queued bool) {
	if light {
		return g.queueOp(name, msg, g.light, false)
	}
	return g.queueOp(name, msg, g.queue, true)
}

// queueOp queues msg in q if it shares a packet well, and pushes it
// (pushNow) if push and it fits a packet; see spread.
func (g *Gossip) queueOp(name string, msg []byte, q *memberlist.TransmitLimitedQueue, push bool) (queued bool) {
	size := g.cfg.Memberlist.UDPBufferSize
	if len(msg) <= size/2 {
		g.enqueue(q, &broadcast{name: name, msg: msg})
		g.m.IncrCounter([]string{"gossip", "ops", "queued"}, 1)
		queued = true
	}
	if push && len(msg)+pushOverhead+len(g.cfg.Memberlist.Label) <= size {
		g.pushNow(msg)
	}
	return queued
}

// announce tells peers our digest entry for origin (our own, or one whose
// op we relay but could not queue); those behind pull the origin's
// snapshot.
func (g *Gossip) announce(origin string) {
	e, _ := g.table.Entry(origin)
	g.enqueue(g.queue, &broadcast{name: origin + "\x00notice", msg: encode(msgNotice, notice{Origin: origin, Entry: e, From: g.name})})
	g.m.IncrCounter([]string{"gossip", "notices", "queued"}, 1)
}

// QueuedBroadcasts is the number of messages waiting to be gossiped. Both
// queues are read under queueMu, as enqueue changes them: an enqueue that
// prunes one queue to add to the other would otherwise show a reader the
// first before its prune and the second after its add, one over the bound
// that holds (memberlist's own sends only ever shrink them).
func (g *Gossip) QueuedBroadcasts() int {
	g.queueMu.Lock()
	defer g.queueMu.Unlock()
	return g.queue.NumQueued() + g.light.NumQueued()
}

// Leave announces our departure (peers drop our records at once instead of
// waiting for failure detection), then waits up to timeout for it to spread.
//
// Before memberlist's own leave, every alive member is told directly over
// TCP. memberlist's leave reaches members only by gossip, which a member can
// miss (it then waits out failure detection), and it looks like a death to
// the EventDelegate (the node it passes never has its State updated); the
// direct word makes peers withdraw our routes within a round trip and
// record us as left, not to be reconnected. memberlist's leave times out
// when no member is left to gossip its broadcast to; that is no error when
// every other member is gone or leaving too.
func (g *Gossip) Leave(timeout time.Duration) error {
	ml := g.ml.Load()
	if ml == nil {
		return nil
	}
	msg := encode(msgLeaving, leaving{Name: g.name, Inc: g.table.Digest()[g.name].Inc})
	var wg sync.WaitGroup
	for _, n := range ml.Members() {
		// Only Name may be read from memberlist's nodes (see nodes.go).
		peer := g.node(n.Name)
		if n.Name == g.name || peer == nil {
			continue
		}
		wg.Add(1)
		// Owned by Shutdown too: a send to an unresponsive peer outlives
		// the wait below by up to memberlist's TCPTimeout.
		if !g.goLoop(func() {
			defer wg.Done()
			_ = ml.SendReliable(peer, msg)
		}) {
			wg.Done() // shut down already: nobody to tell
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout / 2):
		g.log.Warn("not every member was told of our leave in time; they will see it by gossip")
	}
	err := ml.Leave(timeout / 2)
	if err != nil && !g.othersAlive() {
		// Every other member is gone or told us it is leaving too (a whole
		// cluster stopped at once): nobody was left to pass memberlist's
		// broadcast on, and nobody is left who needs it.
		g.log.Info("no other member left to tell of our leave", "memberlist", err)
		return nil
	}
	return err
}

// Shutdown stops memberlist without a leave (peers will see us fail) and
// waits for every goroutine. Safe to call more than once.
func (g *Gossip) Shutdown() error {
	var err error
	g.stopOnce.Do(func() {
		g.loopMu.Lock()
		g.stopping = true
		g.loopMu.Unlock()
		close(g.stop)
		if ml := g.ml.Load(); ml != nil {
			err = ml.Shutdown()
		}
		g.wg.Wait()
	})
	return err
}

// LocalAddr is the address memberlist advertises for us, as our own table
// recorded it when memberlist announced us: memberlist's LocalNode points
// at a node it rewrites (UpdateNode on a new incarnation), see nodes.go.
func (g *Gossip) LocalAddr() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m := g.members[g.name]; m != nil {
		return m.addr
	}
	return ""
}

// othersAlive reports whether a member other than this one is alive as
// this member last heard.
func (g *Gossip) othersAlive() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, m := range g.members {
		if name != g.name && m.status == StatusAlive {
			return true
		}
	}
	return false
}

func (g *Gossip) numMembers() int {
	if ml := g.ml.Load(); ml != nil {
		return ml.NumMembers()
	}
	return 1
}

// goLoop runs f on a goroutine that Shutdown waits for, and reports
// whether it did: once Shutdown has begun it does not. memberlist calls our
// delegates (which start view repairs) from its own goroutines, and its
// stream handlers may still run after it has shut down; an Add there,
// concurrent with Shutdown's Wait, is a WaitGroup misuse (a race, or a
// goroutine Shutdown does not wait for). loopMu orders every Add before
// the Wait or after stopping.
func (g *Gossip) goLoop(f func()) bool {
	g.loopMu.Lock()
	defer g.loopMu.Unlock()
	if g.stopping {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// submit hands work that may block on the network to the worker; when the
// worker is saturated the work is dropped (anti-entropy will ask again).
func (g *Gossip) submit(f func()) {
	select {
	case g.work <- f:
	default:
		g.m.IncrCounter([]string{"gossip", "work", "dropped"}, 1)
	}
}

func (g *Gossip) worker() {
	for {
		select {
		case <-g.stop:
			return
		case f := <-g.work:
			f()
		}
	}
}

type broadcast struct {
	name string
	msg  []byte
}

func (b *broadcast) Invalidates(o memberlist.Broadcast) bool {
	ob, ok := o.(*broadcast)
	return ok && ob.name == b.name
}
func (b *broadcast) Name() string    { return b.name }
func (b *broadcast) Message() []byte { return b.msg }
func (b *broadcast) Finished()       {}
