package zookeeper_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/agenttest"
)

// The figures, agents side by side with a real ZooKeeper 3.8 in
// the same run. Not part of the suite: run it alone, on a quiet machine
// (docs/bench/history.md, "The ZooKeeper door", has the figures and P1 of
// the same sizes, which the register-to-watch figure is compared with),
//
//	go test -run TestFigures -figures -v -timeout 60m .
//	go test -run TestFigures -figures -figures.parts=watch -figures.sizes=10,50 -v .
//
// and read the FIG lines it logs.
var (
	figures      = flag.Bool("figures", false, "run TestFigures (minutes; logs the issue's ZooKeeper figures)")
	figuresParts = flag.String("figures.parts", "reads,create,watch,kill,sessions", "which of TestFigures' parts to run")
	figuresSizes = flag.String("figures.sizes", "10,50", "cluster sizes for the register-to-watch figure")
	// P1 (cmd/namecast-bench) runs its clusters on the lan profile; the
	// register-to-watch figure is compared with it, so it does too.
	figuresProfile = flag.String("figures.profile", "lan", "timing profile of the register-to-watch clusters")
	figuresPause   = flag.Bool("figures.pause", true, "space the register-to-watch figure's changes as P1 spaces its trials (see pause)")
)

func part(name string) bool { return strings.Contains(","+*figuresParts+",", ","+name+",") }

func TestFigures(t *testing.T) {
	if !*figures {
		t.Skip("the figures run only with -figures (see figures_test.go)")
	}
	z := startRealZK(t)
	_, agents := zkAgents(t, 3)
	t.Logf("servers: ZooKeeper %s, agents %v", z.Addr, agents)
	reads := readFigures{}
	if part("reads") {
		figReads(t, reads, "bare", startBare(t).Addr(), false)
	}
	for _, srv := range []struct{ name, addr string }{{"zookeeper-3.8", z.Addr}, {"agent", agents[0]}} {
		if part("reads") {
			figReads(t, reads, srv.name, srv.addr, true)
		}
		if part("create") {
			figEphemeralCreate(t, srv.name, srv.addr)
		}
	}
	if part("reads") {
		reads.log(t)
	}
	if part("watch") {
		figPropagation(t, "zookeeper-3.8", z.Addr, z.Addr, 1)
		for _, f := range strings.Split(*figuresSizes, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("-figures.sizes: %v", err)
			}
			// A subtest, so that each size's agents stop before the next
			// size's start and take none of its CPU.
			t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
				c, as := zkAgents(t, n, agenttest.WithProfile(*figuresProfile))
				figPropagationAgents(t, fmt.Sprintf("agents N=%d", n), c, as, n)
			})
		}
	}
	if part("kill") {
		figKill(t, "agent, Java Dubbo session 60 s", agents, 60*time.Second, 10)
		figKill(t, "agent, dubbo-go session 5 s", agents, 5*time.Second, 10)
		figKill(t, "zookeeper-3.8, dubbo-go session 5 s", []string{z.Addr}, 5*time.Second, 3)
		figKill(t, "zookeeper-3.8, Java Dubbo session 60 s", []string{z.Addr}, 60*time.Second, 1)
	}
	if part("sessions") {
		figSessions(t, z, agents[0])
	}
}

// dist summarises latencies.
type dist []time.Duration

func (d dist) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append(dist(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func (d dist) String() string {
	return fmt.Sprintf("n=%d p50=%v p99=%v max=%v", len(d), d.pct(0.50).Round(time.Microsecond),
		d.pct(0.99).Round(time.Microsecond), d.pct(1).Round(time.Microsecond))
}

// providerName is a realistic provider znode name: Dubbo's URL-encoded
// provider URL, ~300 bytes.
func providerName(i int) string {
	u := fmt.Sprintf("dubbo://10.%d.%d.%d:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider"+
		"&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false&interface=org.apache.dubbo.demo.DemoService"+
		"&methods=sayHello,sayHelloAsync&pid=%d&release=3.3.1&side=provider&timestamp=1735689600000", i/65536, i/256%256, i%256, 1000+i)
	return url.QueryEscape(u)
}

const benchRoot = "/dubbo/org.apache.dubbo.demo.DemoService/providers"

func benchConn(t *testing.T, addr string, timeout time.Duration) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{addr}, timeout, zk.WithLogger(quietLog{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}
	return c
}

type quietLog struct{}

func (quietLog) Printf(string, ...interface{}) {}

func mkdirs(c *zk.Conn, path string) {
	p := ""
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		p += "/" + part
		c.Create(p, nil, 0, acl)
	}
}

// figReads: a node with 1,000 provider children; getChildren, exists and
// getData pipelined by 32 goroutines on one connection, as a client
// library multiplexes its callers. setup creates the node and its
// children first (the bare server answers without them).
func figReads(t *testing.T, figs readFigures, name, addr string, setup bool) {
	c := benchConn(t, addr, 30*time.Second)
	if setup {
		mkdirs(c, benchRoot)
		for i := 0; i < 1000; i++ {
			if _, err := c.Create(benchRoot+"/"+providerName(i), []byte("10.0.0.1"), zk.FlagEphemeral, acl); err != nil {
				t.Fatal(err)
			}
		}
	}
	leaf := benchRoot + "/" + providerName(7)
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"getChildren(1,000)", func() error {
			ch, _, err := c.Children(benchRoot)
			if err == nil && len(ch) != 1000 {
				err = fmt.Errorf("%d children, want 1000", len(ch))
			}
			return err
		}},
		{"exists", func() error { _, _, err := c.Exists(leaf); return err }},
		{"getData", func() error { _, _, err := c.Get(leaf); return err }},
	} {
		// x32 is the figure; x1 is one caller's round trip, what a
		// request costs without waiting behind 31 others (Little's law:
		// at x32, mean latency = 32 / throughput).
		for _, depth := range []int{1, 32} {
			d, ops := pipelined(t, depth, 3*time.Second, op.do)
			t.Logf("FIG reads    %-14s %-20s pipelined x%-2d: %s  %.0f ops/s", name, op.name, depth, d, ops)
			figs[readKey{op.name, depth, name}] = readFigure{d.pct(0.50), d.pct(0.99), ops}
		}
	}
	if setup {
		for i := 0; i < 1000; i++ {
			c.Delete(benchRoot+"/"+providerName(i), -1)
		}
	}
}

type readKey struct {
	op     string
	depth  int
	server string
}

type readFigure struct {
	p50, p99 time.Duration
	ops      float64
}

type readFigures map[readKey]readFigure

// log prints the read figures side by side: the bare limit, the agent
// and ZooKeeper, and the agent's ops/s and p99 as ratios to the bare
// limit's (1.00 = as fast as the framing alone on this machine).
func (f readFigures) log(t *testing.T) {
	t.Logf("FIG reads    %-20s %-3s | %-28s | %-28s | %-28s | agent/bare ops/s, p99", "op", "in", "bare", "agent", "zookeeper-3.8")
	for _, op := range []string{"getChildren(1,000)", "exists", "getData"} {
		for _, depth := range []int{1, 32} {
			b, a, z := f[readKey{op, depth, "bare"}], f[readKey{op, depth, "agent"}], f[readKey{op, depth, "zookeeper-3.8"}]
			cell := func(r readFigure) string {
				return fmt.Sprintf("%v %v %.0f/s", r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), r.ops)
			}
			ratio := func(x, y float64) float64 {
				if y == 0 {
					return 0
				}
				return x / y
			}
			t.Logf("FIG reads    %-20s x%-2d | %-28s | %-28s | %-28s | %.2f, %.2f", op, depth, cell(b), cell(a), cell(z),
				ratio(a.ops, b.ops), ratio(float64(a.p99), float64(b.p99)))
		}
	}
}

func pipelined(t *testing.T, workers int, d time.Duration, op func() error) (dist, float64) {
	var mu sync.Mutex
	var all dist
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine dist
			for time.Since(start) < d {
				s := time.Now()
				if err := op(); err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, time.Since(s))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, float64(len(all)) / time.Since(start).Seconds()
}

// figEphemeralCreate: one create of an ephemeral provider node at a time.
func figEphemeralCreate(t *testing.T, name, addr string) {
	c := benchConn(t, addr, 30*time.Second)
	mkdirs(c, benchRoot)
	var d dist
	for i := 0; i < 500; i++ {
		s := time.Now()
		if _, err := c.Create(benchRoot+"/"+providerName(5000+i), nil, zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
		d = append(d, time.Since(s))
	}
	t.Logf("FIG create   %-14s ephemeral create, one at a time: %s", name, d)
	for i := 0; i < 500; i++ {
		c.Delete(benchRoot+"/"+providerName(5000+i), -1)
	}
}

// figPropagation: a provider registers through A; a consumer on B has a
// child watch on the providers node; the time from the create's reply to
// the watch event.
func figPropagation(t *testing.T, name, a, b string, n int) {
	pc, cc := benchConn(t, a, 30*time.Second), benchConn(t, b, 30*time.Second)
	root := fmt.Sprintf("/dubbo/prop%d.Api/providers", n)
	mkdirs(pc, root)
	waitExists(t, cc, root)
	var d, gone, closed dist
	for i := 0; i < 100; i++ {
		pause()
		_, _, w, err := cc.ChildrenW(root)
		if err != nil {
			t.Fatal(err)
		}
		p := root + "/" + providerName(i)
		s := time.Now()
		if _, err := pc.Create(p, nil, zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w:
			d = append(d, time.Since(s))
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no watch event on B within 30s", name)
		}
		// Remove it and wait until B saw the removal, so trials stay apart.
		pause()
		gone = append(gone, timeDelete(t, name, pc, cc, root, p))
		waitGone(t, cc, p)
		closed = append(closed, timeCloseSession(t, name, a, cc, root, root+"/"+providerName(1000+i)))
	}
	t.Logf("FIG watch    %-14s register via A -> child watch fires on B: %s", name, d)
	t.Logf("FIG watch    %-14s delete via A -> child watch fires on B:   %s", name, gone)
	t.Logf("FIG watch    %-14s closeSession via A -> watch fires on B:   %s", name, closed)
}

// timeCloseSession opens a session on a, creates the ephemeral p with it,
// waits until B (cc) has p, then closes the session and times it until a
// child watch on root armed through cc just before fires: a provider
// shutting down cleanly (closeSession), not deleting its nodes itself.
func timeCloseSession(t *testing.T, name, a string, cc *zk.Conn, root, p string) time.Duration {
	sc := benchConn(t, a, 30*time.Second)
	if _, err := sc.Create(p, nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	waitExists(t, cc, p)
	pause()
	_, _, w, err := cc.ChildrenW(root)
	if err != nil {
		t.Fatal(err)
	}
	s := time.Now()
	sc.Close()
	select {
	case <-w:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no watch event on B within 30s of closeSession", name)
	}
	d := time.Since(s)
	waitGone(t, cc, p)
	return d
}

// pause spaces the register-to-watch figure's timed changes by a random
// 0.3-0.8 s, as namecast-bench P1 spaces its trials: enough for the
// previous change's retransmissions to die down, random so that changes
// do not start in step with the gossip ticker, and above all a rate at
// which a provider's agent really changes its records. Back to back
// (-figures.pause=false), the trials made ~130 changes a second through
// agent A on an idle host, ~6,400 datagrams a second at N=50: three times
// A's direct budget (gossip/direct.go: 2,048 a second once a burst of
// 8,192 is spent), so after the first few seconds A sent about one change
// in four by the epidemic push instead, which leaves a member waiting a
// gossip tick or two now and then: the 150-550 ms trials of the first
// N=50 figures. The figure is of one change's way to another agent, not
// of a bulk change's; the agents' FIG lines say how many changes went
// past the budget.
func pause() {
	if *figuresPause {
		time.Sleep(300*time.Millisecond + rand.N(500*time.Millisecond))
	}
}

// timeDelete deletes p through pc and times it until a child watch on root
// armed through cc just before fires.
func timeDelete(t *testing.T, name string, pc, cc *zk.Conn, root, p string) time.Duration {
	_, _, w, err := cc.ChildrenW(root)
	if err != nil {
		t.Fatal(err)
	}
	s := time.Now()
	if err := pc.Delete(p, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w:
		return time.Since(s)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no watch event on B within 30s of the delete", name)
		return 0
	}
}

func waitExists(t *testing.T, c *zk.Conn, p string) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ok, _, _ := c.Exists(p); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared on %s", p, c.Server())
		}
	}
}

func waitGone(t *testing.T, c *zk.Conn, p string) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ok, _, _ := c.Exists(p); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never went from %s", p, c.Server())
		}
	}
}
