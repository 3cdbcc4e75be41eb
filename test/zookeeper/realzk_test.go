package zookeeper_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// The reference server: Debian's zookeeper 3.8 package, run standalone on
// a free loopback port with its own data directory, exactly as §8.3 of the
// wire spec describes. Its jar's manifest Class-Path pulls in every
// dependency from /usr/share/java, so the class path is the one jar.
const (
	zkJar       = "/usr/share/java/zookeeper.jar"
	zkMainClass = "org.apache.zookeeper.server.ZooKeeperServerMain"
)

// realZK is one running ZooKeeper server.
type realZK struct {
	Addr string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// startRealZK starts a standalone ZooKeeper 3.8 and stops it (and removes
// its files) in t's cleanup. tickTime 2000 gives the Debian session bounds
// [4 s, 40 s]; maxClientCnxns=0 lifts the 60-connections-per-IP limit, which
// the 1,000-session benchmark exceeds. The four-letter words the agent
// answers are enabled; the others answer "not in the whitelist", as the
// agent does for them.
func startRealZK(t testing.TB) *realZK {
	t.Helper()
	java := lookPath(t, "java (Debian openjdk-17-jdk-headless)", "java")
	needFile(t, "ZooKeeper 3.8 (Debian zookeeper)", zkJar)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // the free port can be taken between probe and bind
		z, err := tryStartRealZK(t, java)
		if err == nil {
			return z
		}
		lastErr = err
	}
	t.Fatalf("starting ZooKeeper: %v", lastErr)
	return nil
}

func tryStartRealZK(t testing.TB, java string) (*realZK, error) {
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`tickTime=2000
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
admin.enableServer=false
maxClientCnxns=0
4lw.commands.whitelist=ruok,srvr,stat,mntr,conf,cons,envi,wchs
`, filepath.Join(dir, "data"), port)
	cfgPath := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	z := &realZK{Addr: fmt.Sprintf("127.0.0.1:%d", port), out: &syncBuffer{}, done: make(chan struct{})}
	z.cmd = exec.Command(java, "-Xmx512m", "-Dzookeeper.log.dir="+dir,
		"-Dznode.container.checkIntervalMs=1000", // reap empty containers within seconds, not a minute
		"-cp", zkJar, zkMainClass, cfgPath)
	z.cmd.Dir = dir
	z.cmd.Stdout, z.cmd.Stderr = z.out, z.out
	z.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive a killed test binary
	if err := z.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { z.cmd.Wait(); close(z.done) }()
	t.Cleanup(z.stop)
	deadline := time.Now().Add(60 * time.Second) // a JVM on a busy 2-core machine
	for {
		select {
		case <-z.done:
			return nil, fmt.Errorf("ZooKeeper exited at start: %v\n%s", z.cmd.ProcessState, z.out.tail(4000))
		default:
		}
		if _, err := srvrVersion(z.Addr); err == nil { // ruok says imok before the server serves
			return z, nil
		}
		if time.Now().After(deadline) {
			z.stop()
			return nil, fmt.Errorf("ZooKeeper on %s did not serve within 60s\n%s", z.Addr, z.out.tail(4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the server: SIGTERM, then SIGKILL if it lingers.
func (z *realZK) stop() {
	select {
	case <-z.done:
		return
	default:
	}
	z.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-z.done:
	case <-time.After(10 * time.Second):
		z.cmd.Process.Kill()
		<-z.done
	}
}

// fourLetter sends a four-letter word and reads the answer to EOF.
func fourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// srvrVersion is the "Zookeeper version:" line of srvr.
func srvrVersion(addr string) (string, error) {
	out, err := fourLetter(addr, "srvr")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Zookeeper version: "); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("no version in srvr answer %q", out)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer collects a child's output for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) tail(n int) string {
	str := s.String()
	if len(str) > n {
		return "…" + str[len(str)-n:]
	}
	return str
}

// The harness itself: the reference server starts, is a 3.8, answers ruok
// and srvr, and is gone (port closed) after stop.
func TestRealZooKeeperHarness(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	v, err := srvrVersion(z.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "3.8.") {
		t.Fatalf("reference server version %q, want 3.8.x", v)
	}
	z.stop()
	testutil.Eventually(t, 10*time.Second, func() error {
		if c, err := net.DialTimeout("tcp", z.Addr, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("%s still accepts connections after stop", z.Addr)
		}
		return nil
	})
}
