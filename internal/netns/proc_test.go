package netns

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcSignalAndWait(t *testing.T) {
	t.Parallel()
	l := New(t, 1)
	p := l.Host(0).Start(selfExe(t), helperArg, "hang")
	if err := p.WaitLog("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("graceful exit: %v\n%s", err, p.Log())
	}
	mustContain(t, p.Log(), "caught terminated")
	p.Kill() // no-op on an exited process
}

func TestProcKillTakesItsGroup(t *testing.T) {
	t.Parallel()
	l := New(t, 1)
	p := l.Host(0).Start(selfExe(t), helperArg, "spawn")
	if err := p.WaitLog("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	child := childPid(t, p.Log())
	p.Kill()
	if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Wait after Kill = %v, want signal: killed", err)
	}
	waitDead(t, child, 5*time.Second)
}

func childPid(t *testing.T, log string) int {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if s, ok := strings.CutPrefix(line, "child "); ok {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no child pid in:\n%s", log)
	return 0
}
