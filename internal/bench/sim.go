package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/gossip/gossiptest"
)

// SimConfig is one P6 size: N members of one system over an in-memory
// network with LAN-like latency, in a synctest bubble (virtual time).
type SimConfig struct {
	N        int
	Profile  string
	Loss     float64       // packet loss on every link
	MinDelay time.Duration // per packet, uniform in [MinDelay, MaxDelay]
	MaxDelay time.Duration
	Trials   int           // registrations timed
	Crashes  int           // crashes timed
	IdleFor  time.Duration // virtual window for idle traffic and CPU
	Seed     int64
	Timeout  time.Duration // per trial, virtual
	Logf     func(format string, args ...any)
}

// startGap spaces member starts in P6 (virtual time).
const startGap = 10 * time.Millisecond

// PushPullRound is how often each member of profile pushes and pulls its
// whole state with one other at n members: memberlist's PushPullInterval
// times its pushPullScale (1 up to 32 members, then ⌈log2(n/32)⌉+1; 180 s
// at 1,000, 210 s at 2,000). Push/pull is the largest idle traffic, and
// rounds bunch up (a member's interval grows as it learns of more), so an
// idle window shorter than this counts whatever rounds it happens to hold.
func PushPullRound(profile string, n int) (time.Duration, error) {
	cfg, err := gossip.Profile(profile)
	if err != nil {
		return 0, err
	}
	round := cfg.Memberlist.PushPullInterval
	if n > 32 {
		round *= time.Duration(math.Ceil(math.Log2(float64(n)/32)) + 1)
	}
	return round, nil
}

// SimResult is what one system did at one size. Durations are virtual
// seconds; CPU is real CPU seconds per member per virtual second.
type SimResult struct {
	Formation  float64
	Last       Durations // registration → the last member has it
	Each       Durations // registration → each member has it
	Crash      Durations // crash → gone on every other member
	CrashEach  Durations // crash → gone on each other member
	Detect     Durations // crash → first suspicion (sim_detect.go)
	Verdict    Durations // first suspicion → gone on every other member
	Idle       []float64 // bytes/s per member
	Sources    map[string]float64
	CPU        float64
	HeapPerMbr float64 // MB
}

// simSystem is namecast or serf as P6 drives them.
type simSystem interface {
	// start starts member i (transport tr) joined to addr ("" for the
	// first), its memberlist logging to logs.
	start(i int, tr *CountingTransport, join string, logs io.Writer) error
	addr(i int) string
	// aliveSeen is how many members member i sees alive.
	aliveSeen(i int) int
	// publish makes member i announce key (a registration, a user event).
	publish(i int, key string) error
	// watch returns a channel that gets, for every other running member,
	// the time it first had key (gone: the time it no longer has any
	// record of member victim).
	watch(ctx context.Context, key string, members []int) <-chan time.Time
	watchGone(ctx context.Context, victim int, members []int) <-chan time.Time
	crash(i int)
	close()
}

// RunSim runs one system at one size; it must be called inside a bubble.
func RunSim(ctx context.Context, sys simSystem, net *gossiptest.Network, serf bool, c SimConfig) (SimResult, error) {
	var res SimResult
	logf := c.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	net.SetDelay(c.MinDelay, c.MaxDelay)
	net.SetLoss(c.Loss)
	defer sys.close()
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)

	// Real CPU spent so far, in the progress lines: the virtual clock
	// says nothing of what a phase cost to simulate.
	cpuAt0 := CPUTime()
	cpu := func() string { return fmt.Sprintf("(%.0fs of CPU)", (CPUTime() - cpuAt0).Seconds()) }
	rng := rand.New(rand.NewPCG(uint64(c.Seed), 7))
	det := &detection{}
	ts := make([]*CountingTransport, c.N)
	start := time.Now()
	for i := range c.N {
		ts[i] = WrapCounting(net.NewTransport(simName(i)), nil, serf)
		ts[i].SetClassify(false) // on for the idle window only
		join := ""
		if i > 0 {
			join = sys.addr(rng.IntN(i))
		}
		if err := sys.start(i, ts[i], join, det); err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		// Starting thousands is most of a large size's real time (each
		// join a push/pull of the joined member's whole state): say how
		// far it got, so a long run is seen to move.
		if (i+1)%(c.N/10+1) == 0 {
			logf("    started %d of %d at %.2fs (virtual) %s", i+1, c.N, time.Since(start).Seconds(), cpu())
		}
		// A rolling start, as a deployment does: all at one instant,
		// each member's alive message is retransmitted only for the few
		// members it knows then, and the rest wait for push/pull (137 s
		// to form at N=200, for both systems).
		time.Sleep(startGap)
	}
	// Formation: every member sees every member alive.
	lastLog := time.Now()
	for i := 0; i < c.N; {
		if sys.aliveSeen(i) == c.N {
			i++
			continue
		}
		if time.Since(lastLog) >= 30*time.Second {
			lastLog = time.Now()
			logf("    forming at %.2fs (virtual): %d members see all %d, member %d sees %d %s",
				time.Since(start).Seconds(), i, c.N, i, sys.aliveSeen(i), cpu())
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if time.Since(start) > 10*time.Minute {
			return res, fmt.Errorf("member %d sees %d of %d after %v", i, sys.aliveSeen(i), c.N, time.Since(start))
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.Formation = time.Since(start).Seconds()
	logf("    formed in %.2fs (virtual) %s", res.Formation, cpu())
	settle(ts, logf)
	logf("    membership gossip settled at %.2fs (virtual) %s", time.Since(start).Seconds(), cpu())

	all := make([]int, c.N)
	for i := range all {
		all[i] = i
	}
	var published []int // crash victims come from these: they hold records
	for trial := range c.Trials {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		src := rng.IntN(c.N)
		published = append(published, src)
		key := fmt.Sprintf("svc-%d", trial)
		others := without(all, src)
		// Contexts made inside the bubble: a goroutine waiting on a
		// channel from outside it would keep virtual time from moving.
		tctx, cancel := context.WithCancel(context.Background())
		got := sys.watch(tctx, key, others)
		t0 := time.Now()
		if err := sys.publish(src, key); err != nil {
			cancel()
			return res, err
		}
		last, missed := collect(got, len(others), t0, c.Timeout, &res.Each)
		cancel()
		res.Last.Add(last, missed > 0)
		time.Sleep(time.Duration(300+rng.IntN(500)) * time.Millisecond)
	}
	logf("    registration → last member: p50 %.3fs, p99 %.3fs %s", res.Last.Stat().P50, res.Last.Stat().P99, cpu())

	// Idle: nothing changes; bytes and CPU per member per virtual second.
	time.Sleep(10 * time.Second)
	for _, t := range ts {
		t.SetClassify(true)
	}
	tr := StartTraffic(ts)
	cpu0, t0 := CPUTime(), time.Now()
	time.Sleep(c.IdleFor)
	res.Idle, res.Sources = tr.PerMember(), tr.BySource()
	for _, t := range ts {
		t.SetClassify(false)
	}
	res.CPU = (CPUTime() - cpu0).Seconds() / time.Since(t0).Seconds() / float64(c.N)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > ms0.HeapInuse {
		res.HeapPerMbr = MB(ms.HeapInuse-ms0.HeapInuse) / float64(c.N)
	}
	logf("    idle %v: heap %.0f MB in use %s", c.IdleFor, MB(ms.HeapInuse), cpu())
	writeHeapProfile(serf, c.N, logf)

	running := append([]int(nil), all...)
	for k := range min(c.Crashes, len(published)) {
		victim := published[k]
		if !contains(running, victim) {
			continue
		}
		running = without(running, victim)
		tctx, cancel := context.WithCancel(context.Background())
		got := sys.watchGone(tctx, victim, running)
		det.arm(simName(victim))
		t0 := time.Now()
		sys.crash(victim)
		last, missed := collect(got, len(running), t0, c.Timeout+30*time.Second, &res.CrashEach)
		cancel()
		res.Crash.Add(last, missed > 0)
		if at := det.first(); !at.IsZero() && missed == 0 {
			res.Detect.Add(at.Sub(t0), false)
			res.Verdict.Add(t0.Add(last).Sub(at), false)
		}
		time.Sleep(2 * time.Second)
	}
	logf("    crash → gone: p50 %.2fs, max %.2fs (crash → first suspicion p50 %.2fs, max %.2fs; then → gone p50 %.2fs, max %.2fs) %s",
		res.Crash.Stat().P50, res.Crash.Stat().Max, res.Detect.Stat().P50, res.Detect.Stat().Max, res.Verdict.Stat().P50, res.Verdict.Stat().Max, cpu())
	return res, nil
}

// settle waits, at least 5 s, until the joins' membership gossip has
// died down: until in two seconds running at most 1% of the members sent
// a packet carrying alive, suspect or dead messages. After formation each
// member still retransmits every alive message it queued, a dozen times,
// a few packets per gossip tick: at N=1,000 that is over a minute of full
// packets, in which ops and user events queue behind membership messages.
// The registrations are timed in a cluster at rest, as a deployment is
// between rollouts.
func settle(ts []*CountingTransport, logf func(string, ...any)) {
	for _, t := range ts {
		t.WatchMembership(true)
	}
	defer func() {
		for _, t := range ts {
			t.WatchMembership(false)
		}
	}()
	sum := func() (n uint64) {
		for _, t := range ts {
			n += t.MembershipPackets()
		}
		return n
	}
	time.Sleep(5 * time.Second)
	quiet, prev := 0, sum()
	for waited := 0; quiet < 2; waited++ {
		if waited == 600 {
			logf("    membership gossip still going after 10 min (virtual); timing registrations anyway")
			return
		}
		time.Sleep(time.Second)
		now := sum()
		if now-prev <= uint64(len(ts)/100) {
			quiet++
		} else {
			quiet = 0
		}
		prev = now
	}
}

// collect waits for n arrivals on got, adding each to each (if not nil);
// it returns the last and how many never came within timeout.
func collect(got <-chan time.Time, n int, t0 time.Time, timeout time.Duration, each *Durations) (time.Duration, int) {
	deadline := time.After(timeout)
	var last time.Duration
	for seen := 0; seen < n; seen++ {
		select {
		case at := <-got:
			d := at.Sub(t0)
			last = max(last, d)
			if each != nil {
				each.Add(d, false)
			}
		case <-deadline:
			missed := n - seen
			if each != nil {
				for range missed {
					each.Add(timeout, true)
				}
			}
			return timeout, missed
		}
	}
	return last, 0
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func without(s []int, x int) []int {
	out := make([]int, 0, len(s))
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// arrivals fans in one timestamp per member, from goroutines that each
// wait for their member's condition; they stop with ctx.
func arrivals(ctx context.Context, members []int, wait func(ctx context.Context, i int) bool) <-chan time.Time {
	out := make(chan time.Time, len(members))
	for _, i := range members {
		go func() {
			if wait(ctx, i) {
				out <- time.Now()
			}
		}()
	}
	return out
}

// simName is member i's name in P6, for both systems.
func simName(i int) string { return fmt.Sprintf("m-%04d", i) }

// simMemberlist is the memberlist configuration both systems run in P6.
func simMemberlist(base *memberlist.Config, name string, tr *CountingTransport, logs io.Writer) *memberlist.Config {
	mc := *base
	mc.Name = name
	mc.Transport = tr
	mc.LogOutput = logs
	mc.Logger = nil
	return &mc
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// sortedCopy is a sorted copy of v.
func sortedCopy(v []float64) []float64 {
	out := append([]float64(nil), v...)
	sort.Float64s(out)
	return out
}

// writeHeapProfile writes a heap profile after the idle window to
// $NAMECAST_P6_HEAPPROFILE-<system>-<N>.prof, if that is set: where a
// simulated member's bytes go (go tool pprof -sample_index=inuse_space).
func writeHeapProfile(serf bool, n int, logf func(string, ...any)) {
	prefix := os.Getenv("NAMECAST_P6_HEAPPROFILE")
	if prefix == "" {
		return
	}
	sys := "namecast"
	if serf {
		sys = "serf"
	}
	path := fmt.Sprintf("%s-%s-%d.prof", prefix, sys, n)
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		logf("    heap profile: %v", err)
	}
}
