package netns

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"
)

// MaxHosts bounds a lab's size: hosts take .1 upward in the lab's /24.
const MaxHosts = 250

// requireEnv names the variable that turns "cannot run here" skips into
// failures; CI should set it so the multi-host tests cannot quietly vanish.
const requireEnv = "NAMECAST_NETNS"

// Lab is a set of network namespaces ("hosts") joined by one bridge.
// Create it with [New]; it is torn down by t.Cleanup or [Lab.Close].
type Lab struct {
	t      testing.TB
	id     string // 8 random hex digits shared by every name in the lab
	sw     string // namespace holding the bridge
	bridge string
	subnet netip.Prefix
	ipv6   bool
	logDir string
	hosts  []*Host

	mu      sync.Mutex
	closed  bool
	created []string // namespaces to delete, in creation order
	procs   []*Proc

	closeOnce sync.Once
}

// Option changes how [New] builds a lab.
type Option func(*Lab)

// WithIPv6 leaves IPv6 on in the lab, so hosts get fe80:: link-local addresses
// and can use ff02::/16 multicast (mDNS over IPv6). Off by default so that
// only 198.18.0.0/15 and 224.0.0.0/4 traffic ever exists; either way it stays
// on the lab's bridge.
func WithIPv6() Option { return func(l *Lab) { l.ipv6 = true } }

// New builds a lab of n hosts, or skips t when this machine cannot (see the
// package doc). It must be called from the test's goroutine.
func New(t testing.TB, n int, opts ...Option) *Lab {
	t.Helper()
	if n < 1 || n > MaxHosts {
		t.Fatalf("netns: %d hosts requested, want 1..%d", n, MaxHosts)
	}
	checkPrereqs(t)
	sweepOnce.Do(func() { sweepStale(t) })

	l := &Lab{t: t, id: registerLab()}
	for _, o := range opts {
		o(l)
	}
	l.sw = l.nsName("sw")
	l.bridge = "nc" + l.id + "br"
	l.subnet = subnetFor(l.id)
	// TempDir before the Cleanups below: cleanups run last-in first-out, so
	// the logs are still there when Close and dumpLogs need them.
	l.logDir = t.TempDir()
	t.Cleanup(l.dumpLogs)
	t.Cleanup(l.Close)

	// The switch namespace is also the probe: if `ip netns add` or a bridge
	// is refused here, nothing else would work either.
	if err := l.addSwitch(); err != nil {
		skip(t, "netns: network namespaces not usable here: %v", err)
	}
	for i := range n {
		h := &Host{lab: l, index: i, ns: l.nsName(fmt.Sprintf("h%d", i)),
			veth: fmt.Sprintf("nc%sh%d", l.id, i), addr: hostAddr(l.subnet, i)}
		if err := l.addHost(h); err != nil {
			t.Fatalf("netns: adding host %d: %v", i, err)
		}
		l.hosts = append(l.hosts, h)
	}
	return l
}

func checkPrereqs(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		skip(t, "netns: network namespaces need Linux, this is %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		skip(t, "netns: creating network namespaces needs root (euid %d)", os.Geteuid())
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip(t, "netns: %v (install the Debian package iproute2)", err)
	}
}

func skip(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireEnv) == "require" {
		t.Fatalf(format+" ["+requireEnv+"=require]", args...)
	}
	t.Skipf(format, args...)
}

// Host returns host i, counting from 0.
func (l *Lab) Host(i int) *Host {
	if i < 0 || i >= len(l.hosts) {
		l.t.Fatalf("netns: host %d out of range: lab has %d", i, len(l.hosts))
	}
	return l.hosts[i]
}

// Hosts returns every host, in index order.
func (l *Lab) Hosts() []*Host { return append([]*Host(nil), l.hosts...) }

// Subnet is the /24 the hosts' addresses come from.
func (l *Lab) Subnet() netip.Prefix { return l.subnet }

// LinkDown cuts host i off the LAN by downing its switch-side veth: its
// interface loses carrier, and frames to and from it (multicast too) are
// dropped, as with a pulled cable. Processes on the host keep running.
func (l *Lab) LinkDown(i int) { l.setLink(i, "down") }

// LinkUp reconnects host i after [Lab.LinkDown].
func (l *Lab) LinkUp(i int) { l.setLink(i, "up") }

func (l *Lab) setLink(i int, state string) {
	l.t.Helper()
	if _, err := ip("-n", l.sw, "link", "set", "dev", l.Host(i).veth, state); err != nil {
		l.t.Fatalf("netns: link %s host %d: %v", state, i, err)
	}
}

// Close kills every process in the lab and deletes its namespaces, which takes
// the bridge and veths with them. It is safe to call more than once; t.Cleanup
// calls it anyway. Failures are reported with t.Errorf: they leak state into
// the machine.
func (l *Lab) Close() { l.closeOnce.Do(l.close) }

func (l *Lab) close() {
	l.mu.Lock()
	l.closed = true
	procs, created := l.procs, l.created
	l.mu.Unlock()
	defer unregisterLab(l.id)

	for _, p := range procs {
		p.killGroup()
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			l.t.Errorf("netns: %s on %s (pid %d) still running 10s after SIGKILL", p.name, p.host.ns, p.Pid())
		}
	}
	// Anything else still inside (children that left our process group, or a
	// Run whose context never ended) would keep the namespace alive unnamed.
	for _, ns := range created {
		killNetnsPids(ns)
	}
	for i := len(created) - 1; i >= 0; i-- {
		if _, err := ip("netns", "del", created[i]); err != nil {
			l.t.Errorf("netns: teardown: %v", err)
		}
	}
}

func (l *Lab) dumpLogs() {
	if !l.t.Failed() {
		return
	}
	l.mu.Lock()
	procs := l.procs
	l.mu.Unlock()
	for _, p := range procs {
		l.t.Logf("netns: log of %s on %s (pid %d, %s):\n%s", p.name, p.host.ns, p.Pid(), p.logPath, tail(p.Log(), 64<<10))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[...]\n" + s[len(s)-n:]
}
