package e2e

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dubbogo/go-zookeeper/zk"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

var registriesFlag = flag.String("registries", "",
	"comma-separated ZooKeeper addresses to run against instead of an in-process 3-agent cluster "+
		"(the first is the provider's, the second the consumer's); e.g. one real ZooKeeper, to check the test itself")

// instancesPath is where dubbo-go v3.3.0 registers the provider by default
// (application-level discovery, docs/protocols/zookeeper-wire.md §5.4): one ephemeral child
// {ip}:{port} per provider process.
const instancesPath = "/services/namecast-greeter-provider"

type registries struct {
	a, b string   // the provider's and the consumer's
	all  []string // every agent's
	// nacos is every agent's Nacos door as dubbo-go names it,
	// nacos://127.0.0.1:PORT (gRPC on PORT+1000); nil with -registries.
	nacos []string
	grace time.Duration // the agents' --zookeeper-grace; 0 when not agents
	// agents is the in-process cluster, nil with -registries: tests of
	// namecast's own views (applications, services) need it.
	agents *agenttest.Cluster
}

// startRegistries is three agents serving ZooKeeper (or -registries).
func startRegistries(t *testing.T) registries {
	t.Helper()
	if *registriesFlag != "" {
		all := strings.Split(*registriesFlag, ",")
		r := registries{a: all[0], b: all[len(all)-1], all: all}
		return r
	}
	c := agenttest.Start(t, 3, func(cfg *agent.Config) { cfg.NacosAddr = nacosPorts(t) })
	var all, nacos []string
	for i := 0; i < 3; i++ {
		zk := c.Agent(i).Addr("zookeeper")
		if zk == "" {
			t.Fatal("the agent serves no ZooKeeper port")
		}
		all = append(all, zk)
		nacos = append(nacos, "nacos://"+c.Agent(i).Addr("nacos"))
	}
	return registries{a: all[0], b: all[1], all: all, nacos: nacos, grace: agentGrace, agents: c}
}

// nacosPorts is an address for an agent's Nacos door whose port and
// port+1000 are both free now: dubbo-go's Nacos client finds gRPC at the
// HTTP port + 1000 and cannot be told otherwise, so port 0 will not do.
// The ports are drawn below the kernel's ephemeral range (32768 up), where
// the other tests' port-0 listeners are not, and away from 8848/9848, a
// developer's real Nacos or agent.
func nacosPorts(t *testing.T) string {
	t.Helper()
	for range 100 {
		p := 10000 + rand.IntN(20000) // p+1000 < 31000
		l1, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1000))
		l1.Close()
		if err != nil {
			continue
		}
		l2.Close()
		return fmt.Sprintf("127.0.0.1:%d", p)
	}
	t.Fatal("found no free port pair p, p+1000 for the Nacos door")
	return ""
}

// agentGrace is the agents' default --zookeeper-grace: a session whose
// connection closed without closeSession expires after min(timeout, grace).
const agentGrace = 5 * time.Second

// views holds one go-zookeeper session per agent, to see what each lists.
type views []*zk.Conn

func dialAll(t *testing.T, addrs []string) views {
	t.Helper()
	var v views
	for _, a := range addrs {
		c, _, err := zk.Connect([]string{a}, 10*time.Second, zk.WithLogger(quiet{}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		v = append(v, c)
	}
	return v
}

type quiet struct{}

func (quiet) Printf(string, ...interface{}) {}

// instances is a condition: every agent lists n provider instances.
func (v views) instances(n int) func() error {
	return func() error {
		for _, c := range v {
			ch, _, err := c.Children(instancesPath)
			if err == zk.ErrNoNode && n == 0 {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: children of %s: %v", c.Server(), instancesPath, err)
			}
			if len(ch) != n {
				return fmt.Errorf("%s lists %d instances %v, want %d", c.Server(), len(ch), ch, n)
			}
		}
		return nil
	}
}

// goneEverywhere polls every agent until none lists an instance and says
// how long that took.
func (v views) goneEverywhere(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		err := v.instances(0)()
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("killed provider still listed after %v: %v", timeout, err)
		}
		time.Sleep(10 * time.Millisecond) // a poll: the measurement's resolution
	}
}

// process is one run of the example program.
type process struct {
	name  string
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	next  int // lines before it were matched by waitLine
	done  chan struct{}
}

func startProcess(t *testing.T, bin, name, registry string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append(args, "-registry", registry)...)
	// The instance's address: dubbo-go registers the host's first
	// non-loopback IP unless told otherwise, and tests stay on loopback.
	cmd.Env = append(os.Environ(), "DUBBO_IP_TO_REGISTRY=127.0.0.1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.read(out)
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s output:\n%s", p.name, p.output())
		}
	})
	return p
}

func (p *process) read(r io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.mu.Unlock()
	}
	p.cmd.Wait()
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// waitLine waits for a line starting with prefix printed after the last
// line waitLine matched.
func (p *process) waitLine(t *testing.T, timeout time.Duration, prefix string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		for i := p.next; i < len(p.lines); i++ {
			if strings.HasPrefix(p.lines[i], prefix) {
				p.next = i + 1
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		select {
		case <-p.done:
			t.Fatalf("%s exited before printing %q:\n%s", p.name, prefix, p.output())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q within %v:\n%s", p.name, prefix, timeout, p.output())
		}
	}
}

func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
