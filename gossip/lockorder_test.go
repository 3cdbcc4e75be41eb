package gossip

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// memberlist calls our event delegate holding its node lock, and the
// delegate takes g.mu, so nothing of ours may ask memberlist anything
// while holding g.mu. reannounce once did (asking for the member count),
// and an agent in CI hung for 17 minutes. Here b's join is held inside
// a's NotifyJoin, memberlist's lock taken, while a's reannounce runs: it
// must wait for memberlist holding nothing of ours, and both must finish.
func TestReannounceAsksMemberlistWithoutHoldingOurLock(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a := startLoopbackMember(t, "a", nil, func(g *Gossip) {
		g.notified = func(member string) {
			if member == "b" {
				once.Do(func() { close(entered); <-release })
			}
		}
	})
	b := startLoopbackMember(t, "b", nil, nil)
	joined := make(chan error, 1)
	go func() {
		_, err := b.Join([]string{a.LocalAddr()})
		joined <- err
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("a was never told of b's join")
	}
	// A lonely join in progress, so reannounce has work to look at.
	a.mu.Lock()
	a.lonely = &lonelyJoin{known: map[string]struct{}{}, wait: time.Hour, next: time.Now().Add(time.Hour)}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() {
		a.reannounce(time.Now())
		close(done)
	}()
	testutil.Eventually(t, 10*time.Second, func() error {
		if waitingIn("(*Gossip).reannounce(", "(*Memberlist).NumMembers(") {
			return nil
		}
		select {
		case <-done:
			t.Fatal("reannounce finished while memberlist held its node lock: the test no longer exercises the order")
		default:
		}
		return fmt.Errorf("reannounce is not yet waiting for memberlist")
	})
	if !a.mu.TryLock() {
		// Releasing b's join now would deadlock it against reannounce.
		t.Fatal("reannounce holds g.mu while waiting for memberlist's node lock, which memberlist holds calling NotifyJoin, which takes g.mu: deadlock")
	}
	a.mu.Unlock()
	close(release)
	for _, c := range []<-chan struct{}{done, errDone(joined, t)} {
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatal("reannounce and b's join did not both finish: deadlock")
		}
	}
}

// startLoopbackMember starts one member on loopback, tune applied to its
// config and prep to it before Start, and shuts it down when the test ends.
func startLoopbackMember(t *testing.T, name string, tune func(*Config), prep func(*Gossip)) *Gossip {
	t.Helper()
	cfg, _ := Profile("local")
	cfg.Table = routes.NewTable(name, 1)
	cfg.Memberlist.BindAddr = "127.0.0.1"
	cfg.Memberlist.BindPort = 0
	cfg.Memberlist.LogOutput = io.Discard
	g := startWith(t, cfg, tune, prep)
	t.Cleanup(func() { _ = g.Shutdown() })
	return g
}

// startWith starts a member of cfg, tune (if set) changing the config and
// prep (if set) seeing the member before it starts.
func startWith(t *testing.T, cfg Config, tune func(*Config), prep func(*Gossip)) *Gossip {
	t.Helper()
	if tune != nil {
		tune(&cfg)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(g)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	return g
}

// waitingIn reports whether some goroutine's stack holds both frames.
func waitingIn(caller, callee string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, s := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(s, caller) && strings.Contains(s, callee) {
			return true
		}
	}
	return false
}

// errDone closes its channel when the join ends, failing t on its error.
func errDone(joined <-chan error, t *testing.T) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		if err := <-joined; err != nil {
			t.Errorf("b's join: %v", err)
		}
		close(c)
	}()
	return c
}
