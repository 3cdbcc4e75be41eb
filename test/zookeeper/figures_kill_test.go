package zookeeper_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// childEnv makes the test binary a "provider process": it opens a session
// of the given timeout, creates an ephemeral node, says READY and waits to
// be killed. Set by figKill; read in TestMain.
const childEnv = "NAMECAST_ZK_PROVIDER_PROCESS"

// runProviderProcess is the child's whole life.
func runProviderProcess(spec string) {
	parts := strings.Split(spec, ";") // addr;path;timeout-ms
	ms, _ := strconv.Atoi(parts[2])
	c, ev, err := zk.Connect([]string{parts[0]}, time.Duration(ms)*time.Millisecond, zk.WithLogger(quietLog{}))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}
	if _, err := c.Create(parts[1], nil, zk.FlagEphemeral, acl); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("READY")
	select {}
}

// figKill: a provider process holding an ephemeral node through the first
// server is killed with SIGKILL; the time until no server lists the node.
func figKill(t *testing.T, name string, servers []string, session time.Duration, trials int) {
	views := make([]*zk.Conn, len(servers))
	for i, s := range servers {
		views[i] = benchConn(t, s, 30*time.Second)
	}
	mkdirs(views[0], benchRoot)
	var d dist
	for i := 0; i < trials; i++ {
		p := benchRoot + "/" + providerName(9000+i)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s;%s;%d", childEnv, servers[0], p, session.Milliseconds()))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "READY\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("provider process: %q", line)
		}
		for _, v := range views {
			waitExists(t, v, p)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		s := time.Now()
		cmd.Wait()
		var wg sync.WaitGroup
		for _, v := range views {
			wg.Add(1)
			go func() { defer wg.Done(); waitGoneFor(t, v, p, 2*session+30*time.Second) }()
		}
		wg.Wait()
		d = append(d, time.Since(s))
	}
	t.Logf("FIG kill -9  %-40s gone from all %d servers: %s", name, len(servers), d)
}

func waitGoneFor(t *testing.T, c *zk.Conn, p string, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); ; time.Sleep(5 * time.Millisecond) {
		if ok, _, _ := c.Exists(p); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s still on %s after %v", p, c.Server(), timeout)
			return
		}
	}
}

// figSessions: 1,000 sessions on one server, each with the three watches a
// Dubbo consumer keeps (providers children, a config-center node, the
// service mapping). Memory per session: for the agent, in-process heap
// after GC minus the same clients' heap against ZooKeeper (the clients
// are identical, so the difference is the agent's); for ZooKeeper, the
// JVM's heap after a full GC (jcmd), before and after. Fan-out: one new
// provider, until all 1,000 child watches fired.
func figSessions(t *testing.T, z *realZK, agent string) {
	const n = 1000
	heap := map[string]float64{}
	for _, srv := range []struct{ name, addr string }{{"zookeeper-3.8", z.Addr}, {"agent", agent}} {
		admin := benchConn(t, srv.addr, 30*time.Second)
		mkdirs(admin, "/dubbo/fan.Api/providers")
		mkdirs(admin, "/dubbo/config/dubbo")
		admin.Create("/dubbo/config/dubbo/fan.Api.configurators", []byte("x"), 0, acl)
		mkdirs(admin, "/dubbo/mapping")
		admin.Create("/dubbo/mapping/fan.Api", []byte("app"), 0, acl)
		jvmBefore := jvmHeapUsed(t, z)
		before := goHeap()
		conns := make([]*zk.Conn, n)
		watches := make([]<-chan zk.Event, n)
		for i := range conns {
			c, ev, err := zk.Connect([]string{srv.addr}, 30*time.Second, zk.WithLogger(quietLog{}))
			if err != nil {
				t.Fatal(err)
			}
			for e := range ev {
				if e.State == zk.StateHasSession {
					break
				}
			}
			conns[i] = c
			_, _, w, err := c.ChildrenW("/dubbo/fan.Api/providers")
			if err != nil {
				t.Fatal(err)
			}
			watches[i] = w
			c.ExistsW("/dubbo/config/dubbo/fan.Api.configurators")
			c.GetW("/dubbo/mapping/fan.Api")
		}
		heap[srv.name] = (goHeap() - before) / n
		if srv.name == "zookeeper-3.8" {
			t.Logf("FIG sessions zookeeper-3.8  JVM heap after full GC: +%.0f bytes/session (3 watches each)", (jvmHeapUsed(t, z)-jvmBefore)/n)
		}
		s := time.Now()
		if _, err := admin.Create("/dubbo/fan.Api/providers/new", nil, zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
		for _, w := range watches {
			select {
			case <-w:
			case <-time.After(60 * time.Second):
				t.Fatalf("%s: a watch did not fire within 60s", srv.name)
			}
		}
		t.Logf("FIG sessions %-14s 1 change -> %d child watches fired in %v", srv.name, n, time.Since(s).Round(time.Microsecond))
		for _, c := range conns {
			c.Close()
		}
	}
	t.Logf("FIG sessions agent          heap: +%.0f bytes/session (agent + client, in-process) - %.0f (same clients on ZooKeeper) = %.0f bytes/session",
		heap["agent"], heap["zookeeper-3.8"], heap["agent"]-heap["zookeeper-3.8"])
}

func goHeap() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// jvmHeapUsed runs a full GC in the ZooKeeper JVM and reads its used heap.
func jvmHeapUsed(t *testing.T, z *realZK) float64 {
	pid := strconv.Itoa(z.cmd.Process.Pid)
	exec.Command("jcmd", pid, "GC.run").Run()
	out, err := exec.Command("jcmd", pid, "GC.heap_info").Output()
	if err != nil {
		t.Logf("jcmd GC.heap_info: %v", err)
		return 0
	}
	// " garbage-first heap   total 262144K, used 12345K [...]"
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, "used "); i >= 0 && strings.Contains(l, "heap") {
			f := strings.Fields(l[i+5:])
			if len(f) > 0 {
				k, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(f[0], ","), "K"), 64)
				if err == nil {
					return k * 1024
				}
			}
		}
	}
	t.Logf("no used heap in jcmd output:\n%s", out)
	return 0
}
