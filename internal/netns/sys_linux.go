package netns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns add` bind-mounts the namespaces it names.
const netnsDir = "/run/netns"

// inNetns runs fn on an OS thread that has joined namespace ns. Sockets keep
// the namespace they were created in, so a socket opened by fn stays usable
// from any goroutine afterwards. fn must not create sockets from other
// goroutines (those run on other threads, outside ns).
func inNetns(ns string, fn func() error) error {
	target, err := os.Open(filepath.Join(netnsDir, ns))
	if err != nil {
		return err
	}
	defer target.Close()
	errc := make(chan error, 1)
	// A fresh goroutine so the caller's is never the one pinned to a thread.
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		if err := setns(target); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		ferr := fn()
		if err := setns(orig); err != nil {
			// Stay locked: the runtime then destroys this thread when the
			// goroutine exits rather than reuse one stuck inside the lab.
			errc <- fmt.Errorf("setns back from %s: %w", ns, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func setns(f *os.File) error { return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) }

// procAttr puts a child in its own process group, so one kill reaches its
// children too, and has the kernel SIGKILL it if the test binary dies without
// running cleanups (a -timeout or a SIGKILL). Pdeathsig survives the exec of
// `ip netns exec` into the real command.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// processAlive reports whether pid exists and is not a zombie. A zombie owner
// is as dead as a missing one: it will never clean up.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	// The state follows the parenthesised command name, which may hold spaces.
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 >= len(stat) || stat[i+2] != 'Z'
		}
	}
	return true
}
