package netns

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// failedTB is a testing.TB that says it failed and keeps its cleanups, so a
// test can run a lab's teardown on demand and inspect what it logged.
type failedTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	logs     strings.Builder
}

func (f *failedTB) Failed() bool { return true }

func (f *failedTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *failedTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs.WriteString(strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n")
}

func (f *failedTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestCloseRemovesEverythingAndDumpsLogs(t *testing.T) {
	t.Parallel()
	ftb := &failedTB{TB: t}
	l := New(ftb, 2)
	p := l.Host(1).Start(selfExe(t), helperArg, "hang")
	if err := p.WaitLog("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	names := labNamespaces(l)
	if len(names) != 3 {
		t.Fatalf("lab created namespaces %v, want switch + 2 hosts", names)
	}

	ftb.runCleanups() // what t.Cleanup does at the end of a failed test
	select {
	case <-p.Done():
	default:
		t.Fatal("process still running after Close")
	}
	if left := existing(t, names); len(left) > 0 {
		t.Fatalf("namespaces left after Close: %v", left)
	}
	links, err := ip("-o", "link", "show")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(links, l.id) {
		t.Fatalf("lab links in the root namespace after Close:\n%s", links)
	}
	mustContain(t, ftb.logs.String(), "ready pid "+strconv.Itoa(p.Pid()))
	l.Close() // idempotent
}

// childEnv makes the test binary, re-run by a test below, build a lab and
// then panic ("panic") or block until killed ("hang").
const childEnv = "NETNS_TEST_CHILD"

func TestChildLab(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("only runs as the child of TestCleanupAfterPanic and TestSweepAfterKill")
	}
	l := New(t, 2)
	p := l.Host(0).Start(selfExe(t), helperArg, "hang")
	if err := p.WaitLog("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("LAB " + strconv.Itoa(p.Pid()) + " " + strings.Join(labNamespaces(l), " ") + "\n")
	if mode == "panic" {
		panic("deliberate panic with a lab open")
	}
	_, _ = os.Stdin.Read(make([]byte, 1)) // until the parent kills us
}

// startChild runs TestChildLab in a new test binary process and returns it
// with the pid of its lab process and its lab's namespaces.
func startChild(t *testing.T, mode string) (cmd *exec.Cmd, out *strings.Builder, proc int, names []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cmd = exec.CommandContext(ctx, selfExe(t), "-test.run=^TestChildLab$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	stdin, err := cmd.StdinPipe() // held open so "hang" blocks
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out = &strings.Builder{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if f, ok := strings.CutPrefix(sc.Text(), "LAB "); ok {
			fields := strings.Fields(f)
			proc, _ = strconv.Atoi(fields[0])
			names = fields[1:]
			break
		}
	}
	if names == nil {
		cmd.Wait()
		t.Fatalf("child printed no LAB line:\n%s", out)
	}
	// Drain the rest so the child never blocks on a full pipe.
	go func() {
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
		}
	}()
	return cmd, out, proc, names
}

func TestCleanupAfterPanic(t *testing.T) {
	t.Parallel()
	New(t, 1) // skips here if namespaces are not usable
	cmd, _, proc, names := startChild(t, "panic")
	if err := cmd.Wait(); err == nil {
		t.Fatal("child test binary did not fail")
	}
	// Cleanup ran before the panic ended the child, so all is gone already.
	if left := existing(t, names); len(left) > 0 {
		t.Fatalf("namespaces left after a panicking test: %v", left)
	}
	waitDead(t, proc, 5*time.Second)
}

func TestSweepAfterKill(t *testing.T) {
	t.Parallel()
	New(t, 1)
	cmd, _, proc, names := startChild(t, "hang")
	// SIGKILL: no cleanup runs in the child, as when -timeout fires.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// Pdeathsig takes the lab's processes down with the test binary.
	waitDead(t, proc, 5*time.Second)
	if left := existing(t, names); len(left) != len(names) {
		t.Fatalf("expected the killed child's namespaces %v to linger, found %v", names, left)
	}
	sweepStale(t)
	if left := existing(t, names); len(left) > 0 {
		t.Fatalf("sweep left %v", left)
	}
}

func TestBuildBinary(t *testing.T) {
	t.Parallel()
	l := New(t, 1)
	const pkg = "github.com/namecast/namecast/internal/netns/testdata/nshello"
	bin := BuildBinary(t, pkg)
	if again := BuildBinary(t, pkg); again != bin {
		t.Fatalf("second build gave %s, want cached %s", again, bin)
	}
	out, err := l.Host(0).Run(t.Context(), bin)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(out), l.Host(0).Addr())
}
