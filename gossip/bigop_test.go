package gossip

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// providerURL is a Dubbo provider URL of the usual size: its op, which
// carries it twice (key and record), is ~850 bytes, over half of
// memberlist's 1,400-byte packet, so it is pushed but not queued.
func providerURL(port int) routes.Record {
	u := fmt.Sprintf("dubbo://10.0.0.7:%d/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider"+
		"&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false&interface=org.apache.dubbo.demo.DemoService"+
		"&methods=sayHello,sayHelloAsync&pid=1007&release=3.3.1&side=provider&timestamp=1735689600000", port)
	return routes.Record{URL: &routes.URL{Interface: "org.apache.dubbo.demo.DemoService", Category: "providers", URL: u}}
}

// Every member that applies an op too big to queue queues a notice of its
// origin instead, so the members its push missed hear of the change on
// its next ticks. Ticks, probes and anti-entropy are off: only the pushes
// move, and the notices wait in the queues, where they are read.
func TestBigOpIsRelayedAsANotice(t *testing.T) {
	var gs []*Gossip
	for i := range 4 {
		cfg, _ := Profile("local")
		cfg.Table = routes.NewTable(fmt.Sprintf("m%d", i), 1)
		cfg.Memberlist.BindAddr = "127.0.0.1"
		cfg.Memberlist.BindPort = 0
		cfg.Memberlist.GossipInterval = time.Hour
		cfg.Memberlist.ProbeInterval = time.Hour
		cfg.Memberlist.PushPullInterval = 0
		cfg.Memberlist.LogOutput = io.Discard
		cfg.AntiEntropyInterval = time.Hour
		cfg.ReconnectInterval = time.Hour
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Shutdown() })
		gs = append(gs, g)
	}
	// With no gossip ticks nobody learns of a member it did not join.
	for i, g := range gs {
		for j, h := range gs {
			if i != j {
				if _, err := g.Join([]string{h.LocalAddr()}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, g := range gs {
			if a := g.AliveMembers(); a != len(gs) {
				return fmt.Errorf("%s sees %d alive members", g.name, a)
			}
		}
		return nil
	})
	d, _ := gs[0].table.ApplyLocal([]routes.Record{providerURL(20880)}, nil)
	if size := len(encode(msgOps, d)); size <= gs[0].cfg.Memberlist.UDPBufferSize/2 {
		t.Fatalf("the op is %d bytes: not over half a packet, so this test tests nothing", size)
	}
	gs[0].Publish(d)
	want := d.Ops[0].Seq
	// With 4 members, each push goes to all 3 others. A member applies
	// the op, then pushes it, then queues the notice: wait for the queue.
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, g := range gs[1:] {
			if e, _ := g.table.Entry(gs[0].name); e.Seq != want {
				return fmt.Errorf("%s holds m0 at seq %d, want %d", g.name, e.Seq, want)
			}
			if g.QueuedBroadcasts() == 0 {
				return fmt.Errorf("%s holds the op and has queued nothing", g.name)
			}
		}
		return nil
	})
	for _, g := range gs[1:] {
		var got []notice
		for _, msg := range (*delegate)(g).GetBroadcasts(0, 1<<20) {
			var n notice
			if msg[0] == msgNotice && decode(msg, &n) == nil {
				got = append(got, n)
			}
		}
		if len(got) != 1 || got[0].Origin != gs[0].name || got[0].Entry.Seq != want || got[0].From != g.name {
			t.Errorf("%s queued notices %+v, want one of m0 at seq %d from itself", g.name, got, want)
		}
	}
}

// The register-to-watch tail of issue 11: a member that every eager push
// of a provider URL's op missed had only the origin's notice (which the
// members holding the op did not pass on) and anti-entropy (a probe's
// summary, a digest exchange and the pull grace: 0.5-1.5 s on lan) to
// learn of it. Here member B's incoming packets are dropped while the push
// epidemic runs, so B is missed every time; it must then hold the op
// within two gossip ticks (lan: 200 ms each) in nearly every trial, as
// it would a small op. Before the fix about half the trials took longer.
// In a bubble, with lan timings, on several seeds.
func TestBigOpReachesTheMemberThePushMissedWithinTicks(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testBigOpReachesMissedMember(t, seed) })
		})
	}
}

func testBigOpReachesMissedMember(t *testing.T, seed int64) {
	const n, trials = 10, 10
	net := gossiptest.NewNetwork(seed)
	net.SetDelay(100*time.Microsecond, time.Millisecond)
	var gs []*Gossip
	defer func() {
		for _, g := range gs {
			_ = g.Shutdown()
		}
		net.Close()
		time.Sleep(time.Minute) // lets memberlist's probe timers end
	}()
	// Started at different times, as agents are, so that their gossip
	// ticks (memberlist's tickers start with the member) are not in step.
	rnd := rand.New(rand.NewPCG(uint64(seed), 11))
	jitter := func() { time.Sleep(time.Duration(rnd.Int64N(int64(200 * time.Millisecond)))) }
	// The early joiners know too few when they join and, once the
	// cluster has grown, reannounce themselves by push/pull: one reaching B
	// in a trial's window made B pull the op by stream, which the dropped
	// links do not stop (1 run in ~15 on seed 4). The sink counts them.
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	mc := metrics.DefaultConfig("namecast")
	mc.EnableHostname, mc.EnableRuntimeMetrics = false, false
	m, err := metrics.New(mc, sink)
	if err != nil {
		t.Fatal(err)
	}
	lonely := 0
	for i := range n {
		jitter()
		cfg, _ := Profile("lan")
		cfg.Table = routes.NewTable(fmt.Sprintf("m%d", i), 1)
		cfg.Metrics = m
		cfg.Memberlist.Transport = net.NewTransport(cfg.Table.Local())
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if _, err := g.Join([]string{gs[0].LocalAddr()}); err != nil {
				t.Fatal(err)
			}
			g.mu.Lock()
			if g.lonely != nil {
				lonely++
			}
			g.mu.Unlock()
		}
		gs = append(gs, g)
	}
	testutil.Eventually(t, 5*time.Minute, func() error {
		for _, g := range gs {
			if a := g.AliveMembers(); a != n {
				return fmt.Errorf("%s sees %d alive members", g.name, a)
			}
		}
		if r := counter(sink, "namecast.gossip.join.reannounced"); r != lonely {
			return fmt.Errorf("%d of %d lonely joiners have reannounced themselves", r, lonely)
		}
		return nil
	})
	a, b := gs[0], gs[n-1]
	holds := func(g *Gossip) bool { return len(g.table.URLs("org.apache.dubbo.demo.DemoService", "providers")) > 0 }
	var took []time.Duration
	for trial := range trials {
		jitter() // and the change comes at any point of their ticks
		rec := providerURL(20000 + trial)
		for _, g := range gs[:n-1] {
			net.SetLinkLoss(g.name, b.name, 1)
		}
		d, _ := a.table.ApplyLocal([]routes.Record{rec}, nil)
		start := time.Now()
		a.Publish(d)
		time.Sleep(20 * time.Millisecond) // the push epidemic is over in a few hops of at most 1 ms
		for _, g := range gs[:n-1] {
			net.SetLinkLoss(g.name, b.name, 0)
		}
		if holds(b) {
			t.Fatalf("trial %d: B got the op through the dropped links", trial)
		}
		for !holds(b) && time.Since(start) < 30*time.Second {
			time.Sleep(time.Millisecond)
		}
		took = append(took, time.Since(start))
		d, _ = a.table.ApplyLocal(nil, []string{rec.Key()})
		a.Publish(d)
		testutil.Eventually(t, time.Minute, func() error {
			for _, g := range gs[1:] {
				if holds(g) {
					return fmt.Errorf("%s still holds the URL", g.name)
				}
			}
			return nil
		})
	}
	t.Logf("%d lonely joiners reannounced themselves before the trials", lonely)
	late := 0
	for _, d := range took {
		if d > 450*time.Millisecond {
			late++
		}
	}
	t.Logf("B, missed by the push, held the op after %v", took)
	// Two ticks of 9 holders each gossiping to 3 of the 9 others miss B
	// with odds (6/9)^18, under 1 in 1,000: one late trial is tolerated.
	if late > 1 {
		slices.Sort(took)
		t.Errorf("%d of %d trials took over 450 ms (two gossip ticks and a pull); slowest %v", late, trials, took[len(took)-1])
	}
}

// counter sums a counter over the sink's intervals.
func counter(sink *metrics.InmemSink, name string) int {
	sum := 0.0
	for _, iv := range sink.Data() {
		if c, ok := iv.Counters[name]; ok {
			sum += c.Sum
		}
	}
	return int(sum)
}
