package zookeeper_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/zookeeper"
	"github.com/namecast/namecast/internal/bench"
	"github.com/namecast/namecast/routes"
)

// figPropagationAgents is figPropagation on a cluster of agents, with the
// time split in two: create's reply -> B's route table has the URL (the
// gossip, what P1 measures), and -> the consumer's child watch fired on B
// (plus B's ZooKeeper door: tree refresh, event, the client's read).
func figPropagationAgents(t *testing.T, name string, c *agenttest.Cluster, addrs []string, n int) {
	a, b := addrs[0], addrs[n-1]
	tbl := c.Agent(n - 1).Table()
	pc, cc := benchConn(t, a, 30*time.Second), benchConn(t, b, 30*time.Second)
	// The providers' own interface, so that each znode is a Dubbo URL
	// record (a path under another interface would be a plain znode).
	const iface = "org.apache.dubbo.demo.DemoService"
	root := benchRoot
	mkdirs(pc, root)
	waitExists(t, cc, root)
	// The deletes below are deliberate unregisters: the door holds only
	// those of a session that connected within RecreateWindow (a client
	// re-registering after a reconnect), so the provider's session is
	// aged past it first, as a provider's is when it shuts down.
	time.Sleep(zookeeper.DefaultRecreateWindow)
	var table, watch, gone, closed dist
	var slow []string
	// note keeps what the process's scheduler did during a trial over the
	// goal (issue 26: 50 ms at N=50), so that a reader can tell a late
	// delivery from a late process (internal/bench.SchedWait).
	note := func(what string, i int, d time.Duration, sw bench.SchedWait) {
		if d > 50*time.Millisecond {
			slow = append(slow, fmt.Sprintf("%s #%d %v: %v", what, i, d.Round(time.Millisecond), sw))
		}
	}
	for i := 0; i < 100; i++ {
		pause()
		sched := startSched()
		_, _, w, err := cc.ChildrenW(root)
		if err != nil {
			t.Fatal(err)
		}
		arrived := make(chan time.Time, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		go func() {
			var idx uint64
			for ctx.Err() == nil {
				if len(tbl.URLs(iface, "providers")) > 0 {
					arrived <- time.Now()
					return
				}
				idx = tbl.WaitFor(ctx, routes.WatchService(iface, "providers"), idx)
			}
		}()
		p := root + "/" + providerName(i)
		s := time.Now()
		if _, err := pc.Create(p, nil, zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w:
			watch = append(watch, time.Since(s))
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no watch event on B within 30s", name)
		}
		select {
		case at := <-arrived:
			table = append(table, at.Sub(s))
		case <-ctx.Done():
			t.Fatalf("%s: B's table never had the URL", name)
		}
		cancel()
		note("register", i, watch[len(watch)-1], sched())
		// Remove it and wait until B saw the removal, so trials stay apart.
		pause()
		sched = startSched()
		gone = append(gone, timeDelete(t, name, pc, cc, root, p))
		note("delete", i, gone[len(gone)-1], sched())
		waitGone(t, cc, p)
		// A session's end is never held (it cannot re-create), young as
		// this one is. (The session's create and wait come first.)
		sched = startSched()
		closed = append(closed, timeCloseSession(t, name, a, cc, root, root+"/"+providerName(1000+i)))
		note("closeSession", i, closed[len(closed)-1], sched())
	}
	t.Logf("FIG watch    %-14s register via A -> in B's table:           %s", name, table)
	t.Logf("FIG watch    %-14s register via A -> child watch fires on B: %s", name, watch)
	t.Logf("FIG watch    %-14s delete via A -> child watch fires on B:   %s", name, gone)
	t.Logf("FIG watch    %-14s closeSession via A -> watch fires on B:   %s", name, closed)
	// The figure is of the direct push (gossip/direct.go); a change past
	// A's direct budget went by the epidemic push instead (see pause).
	t.Logf("FIG watch    %-14s changes A sent past its direct budget:    %d", name, overBudget(t, c.Agent(0).HTTPAddr()))
	for _, s := range slow {
		t.Logf("FIG watch    %-14s over 50 ms: %s", name, s)
	}
}

// startSched starts watching this process's scheduling; the function it
// returns stops and tells what it saw (internal/bench.SchedWait).
func startSched() func() bench.SchedWait {
	a := bench.NewArrivals([]string{"end"})
	a.Start()
	return func() bench.SchedWait {
		a.Mark("end", time.Now())
		return a.Wait(context.Background(), time.Second).Sched
	}
}

// overBudget is how many changes the agent at httpAddr published past its
// direct budget, from its /metrics.
func overBudget(t *testing.T, httpAddr string) int {
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "namecast_gossip_direct_over_budget_total "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", line, err)
			}
			return int(n)
		}
	}
	return 0 // never counted
}
