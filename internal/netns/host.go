package netns

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Host is one network namespace of a [Lab], with a single interface, eth0.
type Host struct {
	lab   *Lab
	index int
	ns    string // namespace name, for `ip netns exec`
	veth  string // switch-side end of the host's veth pair
	addr  netip.Addr
}

// Name is the namespace's name, as `ip netns` lists it.
func (h *Host) Name() string { return h.ns }

// Index is the host's position in the lab, as passed to [Lab.Host].
func (h *Host) Index() int { return h.index }

// Addr is the host's IPv4 address on the lab LAN, such as "198.18.7.1".
func (h *Host) Addr() string { return h.addr.String() }

// IP is [Host.Addr] as a netip.Addr.
func (h *Host) IP() netip.Addr { return h.addr }

// Command prepares name to run inside the host, for callers that need stdin
// or extra environment; [Host.Run] covers the common case. Cancelling ctx
// kills the command's whole process group.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.ns, name}, args...)...)
	cmd.Env = labEnv(nil)
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	// A grandchild holding the output pipe must not hang Wait forever.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Run runs a command to completion inside the host and returns its combined
// stdout and stderr. A non-zero exit is an error that includes the output.
func (h *Host) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := h.Command(ctx, name, args...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s on %s: %w: %s", name, strings.Join(args, " "), h.ns, err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Start starts a long-running process inside the host, with stdout and stderr
// going to a log file that is dumped with t.Log if the test fails. The process
// is SIGKILLed, with its process group, when the lab closes.
func (h *Host) Start(name string, args ...string) *Proc {
	h.lab.t.Helper()
	return h.StartEnv(nil, name, args...)
}

// StartEnv is [Host.Start] with extra KEY=VALUE environment entries.
func (h *Host) StartEnv(env []string, name string, args ...string) *Proc {
	l := h.lab
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.t.Fatalf("netns: Start %s on %s after the lab was closed", name, h.ns)
	}
	logPath := filepath.Join(l.logDir, fmt.Sprintf("%02d-h%d-%s.log", len(l.procs), h.index, filepath.Base(name)))
	f, err := os.Create(logPath)
	if err != nil {
		l.t.Fatalf("netns: %v", err)
	}
	// The child writes the file directly: no copying goroutine to outlive it.
	defer f.Close()
	cmd := exec.Command("ip", append([]string{"netns", "exec", h.ns, name}, args...)...)
	cmd.Env = labEnv(env)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("netns: starting %s on %s: %v", name, h.ns, err)
	}
	p := &Proc{host: h, name: filepath.Base(name), cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	l.procs = append(l.procs, p)
	return p
}

// labEnv is the test's environment without proxy settings, which would send
// a lab process's HTTP requests for 198.18.x.x towards a proxy outside, plus
// extra.
func labEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToLower(k) {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}
