package netns

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Proc is a process started by [Host.Start].
type Proc struct {
	host    *Host
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done closes
}

// Pid is the process id, in the test's pid namespace.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Host is where the process runs.
func (p *Proc) Host() *Host { return p.host }

// Kill SIGKILLs the process and everything in its process group, as a
// crashing host would, and returns once it has exited. Killing an exited
// process is a no-op.
func (p *Proc) Kill() {
	p.killGroup()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.host.lab.t.Errorf("netns: %s (pid %d) still running 10s after SIGKILL", p.name, p.Pid())
	}
}

func (p *Proc) killGroup() {
	select {
	case <-p.done:
		// Leader reaped; its pid may be reused, so leave the group alone.
		// Group members that outlived it are caught by Close's sweep of the
		// namespace.
	default:
		_ = signalGroup(p.Pid(), syscall.SIGKILL)
	}
}

// Signal sends sig to the process only (not its group), e.g. SIGTERM to ask
// an agent to shut down gracefully.
func (p *Proc) Signal(sig os.Signal) error {
	return p.cmd.Process.Signal(sig)
}

// Wait waits for the process to exit and returns what [exec.Cmd.Wait] did:
// nil for exit status 0. It may be called any number of times.
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// LogPath is the file holding the process's stdout and stderr.
func (p *Proc) LogPath() string { return p.logPath }

// Log returns the process's output so far.
func (p *Proc) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", p.logPath, err)
	}
	return string(b)
}

// WaitLog polls the output until it contains substr. It fails fast if the
// process exits first, so a crashed agent is not mistaken for a slow one.
func (p *Proc) WaitLog(substr string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(p.Log(), substr) {
			return nil
		}
		select {
		case <-p.done:
			if strings.Contains(p.Log(), substr) {
				return nil
			}
			return fmt.Errorf("%s on %s exited (%v) without printing %q; output:\n%s", p.name, p.host.ns, p.err, substr, tail(p.Log(), 4<<10))
		case <-deadline.C:
			return fmt.Errorf("%s on %s did not print %q within %v; output:\n%s", p.name, p.host.ns, substr, timeout, tail(p.Log(), 4<<10))
		case <-tick.C:
		}
	}
}
