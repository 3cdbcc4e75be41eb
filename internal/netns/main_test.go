package netns

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperArg as the first argument makes the test binary act as a small
// network tool instead of running tests: the binary already exists in every
// namespace (they share the filesystem), so no extra tools are needed.
const helperArg = "netns-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	// Under -race, a helper with more than one goroutine alive at exit
	// sleeps a second (the race runtime's atexit_sleep_ms) before exiting:
	// every Run would take a second.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// selfExe is the test binary, which runs helper modes given helperArg.
func selfExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func runHelper(mode string, args []string) int {
	var err error
	switch mode {
	case "echo-server":
		err = echoServer(args[0])
	case "dial":
		err = dialOnce(args[0])
	case "mcast-recv":
		err = mcastRecv(args[0])
	case "mcast-send":
		err = mcastSend(args[0], args[1])
	case "hang":
		err = hang()
	case "spawn":
		err = spawn()
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// echoServer greets every connection with its own and the peer's address.
func echoServer(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("ready", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		fmt.Fprintf(c, "hello from %s to %s\n", c.LocalAddr(), c.RemoteAddr())
		c.Close()
	}
}

func dialOnce(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	return err
}

func mcastRecv(group string) error {
	gaddr, err := net.ResolveUDPAddr("udp4", group)
	if err != nil {
		return err
	}
	iface, err := net.InterfaceByName("eth0")
	if err != nil {
		return err
	}
	c, err := net.ListenMulticastUDP("udp4", iface, gaddr)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	buf := make([]byte, 1500)
	for {
		n, from, err := c.ReadFromUDP(buf)
		if err != nil {
			return err
		}
		fmt.Printf("got %s from %s\n", buf[:n], from.IP)
	}
}

// mcastSend sends without naming an interface: the datagram leaves by the
// lab's 224.0.0.0/4 route, which is what the test checks.
func mcastSend(group, payload string) error {
	gaddr, err := net.ResolveUDPAddr("udp4", group)
	if err != nil {
		return err
	}
	c, err := net.DialUDP("udp4", nil, gaddr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(payload))
	return err
}

func hang() error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	fmt.Println("ready pid", os.Getpid())
	fmt.Println("caught", <-sig)
	return nil
}

// spawn starts a grandchild that stays in the helper's process group and has
// no parent-death signal: only a kill of the whole group reaches it.
func spawn() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(exe, helperArg, "hang")
	if err := child.Start(); err != nil {
		return err
	}
	fmt.Println("child", child.Process.Pid)
	return hang()
}

// waitDead waits until pid has exited, failing t after timeout.
func waitDead(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	poll(t, timeout, func() bool { return !processAlive(pid) }, "pid %d to exit", pid)
}

// poll checks cond every 10ms until it holds, failing t after timeout.
func poll(t *testing.T, timeout time.Duration, cond func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for "+what, append([]any{timeout}, args...)...)
		case <-tick.C:
		}
	}
}

func labNamespaces(l *Lab) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.created...)
}

func existing(t *testing.T, names []string) []string {
	t.Helper()
	all, err := netnsNames()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, n := range names {
		for _, a := range all {
			if a == n {
				left = append(left, n)
			}
		}
	}
	return left
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("output does not contain %q:\n%s", sub, s)
	}
}
