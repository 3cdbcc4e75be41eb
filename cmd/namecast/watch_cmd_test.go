package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// syncBuffer is a command's output that a test can wait on while the
// command is still running.
type syncBuffer struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until text occurs n times in the output.
func (s *syncBuffer) waitFor(t *testing.T, text string, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for strings.Count(s.String(), text) < n {
		select {
		case <-s.wrote:
		case <-deadline:
			t.Fatalf("output never had %q %d times:\n%s", text, n, s.String())
		}
	}
}

type runningWatch struct {
	stdout, stderr *syncBuffer
	stop           func() int // interrupts the command and returns its exit code
}

func startWatch(t *testing.T, args ...string) *runningWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w := &runningWatch{stdout: newSyncBuffer(), stderr: newSyncBuffer()}
	c := &cli{stdin: strings.NewReader(""), stdout: w.stdout, stderr: w.stderr, ctx: ctx}
	done := make(chan int, 1)
	go func() { done <- c.run(args) }()
	w.stop = func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("watch did not end when interrupted")
			return -1
		}
	}
	t.Cleanup(func() { cancel() })
	return w
}

func TestWatchRoute(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	w := startWatch(t, "watch", "route", "T", "--http", f.addr())
	f.on("GET /v1/topics/T", 200, `{"queueDatas":[{"brokerName":"a","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}],
		"brokerDatas":[{"cluster":"c","brokerName":"a","brokerAddrs":{"0":"10.0.0.1:10911"}}]}`)
	w.stdout.waitFor(t, "10.0.0.1:10911", 1)
	f.on("GET /v1/topics/T", 200, routeJSON)
	w.stdout.waitFor(t, "route of T", 2)
	w.stdout.waitFor(t, "10.0.0.4:10911", 1)
	if code := w.stop(); code != 0 {
		t.Errorf("interrupted watch exited %d", code)
	}
	out := w.stdout.String()
	if !strings.HasPrefix(out, "# ") || !strings.Contains(out, "BROKER  CLUSTER  ID  ADDR\na       c        0   10.0.0.1:10911\n") {
		t.Errorf("watch printed\n%s", out)
	}
}

func TestWatchRouteWaitsForTopic(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	f.on("GET /v1/topics/T", 404, `{"error":"no route for topic \"T\": no live broker registers it"}`)
	w := startWatch(t, "watch", "route", "T", "--http", f.addr())
	w.stderr.waitFor(t, `no route for topic "T": no live broker registers it (waiting for it)`, 1)
	f.on("GET /v1/topics/T", 200, routeJSON)
	w.stdout.waitFor(t, "broker-a", 2)
	if code := w.stop(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

func TestWatchMembersJSON(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	f.on("GET /v1/members", 200, `[{"name":"n1","addr":"h:1","status":"alive","tags":{},"since":"2026-12-08T10:00:00Z"}]`)
	w := startWatch(t, "watch", "members", "--json", "--http", f.addr())
	w.stdout.waitFor(t, "\n", 1)
	f.on("GET /v1/members", 200, `[{"name":"n1","addr":"h:1","status":"alive","tags":{},"since":"2026-12-08T10:00:00Z"},{"name":"n2","addr":"h:2","status":"alive","tags":{},"since":"2026-12-08T10:00:01Z"}]`)
	w.stdout.waitFor(t, "\n", 2)
	w.stop()
	lines := strings.Split(strings.TrimSpace(w.stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("printed %d lines:\n%s", len(lines), w.stdout.String())
	}
	assertJSON(t, lines[1], `[{"name":"n1","addr":"h:1","status":"alive","tags":{},"since":"2026-12-08T10:00:00Z"},{"name":"n2","addr":"h:2","status":"alive","tags":{},"since":"2026-12-08T10:00:01Z"}]`)
}

func TestWatchServices(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	f.on("GET /v1/services", 200, `{"services":[{"interface":"com.foo.Bar","providers":1,"consumers":0,"appInstances":0,"applications":[],"versions":[]}]}`)
	f.on("GET /v1/services/com.foo.Bar", 200, `{"urls":["dubbo://h:1/com.foo.Bar"]}`)
	w := startWatch(t, "watch", "services", "com.foo.Bar", "--category", "routers", "--http", f.addr())
	w.stdout.waitFor(t, "h:1 ", 1)
	w.stop()
	if out := w.stdout.String(); !strings.Contains(out, " routers of com.foo.Bar\nADDRESS  PROTOCOL") || !strings.Contains(out, "\nh:1      dubbo ") {
		t.Errorf("watch services IFACE printed\n%s", out)
	}
	if q := f.last(t).query; !strings.HasPrefix(q, "category=routers") {
		t.Errorf("asked %q", q)
	}
	w = startWatch(t, "watch", "services", "--http", f.addr())
	w.stdout.waitFor(t, "com.foo.Bar", 1)
	w.stop()
	if out := w.stdout.String(); !strings.Contains(out, "INTERFACE    PROVIDERS") {
		t.Errorf("watch services printed\n%s", out)
	}
}

func TestWatchTopics(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	f.on("GET /v1/topics", 200, topicsJSON)
	w := startWatch(t, "watch", "topics", "--http", f.addr())
	w.stdout.waitFor(t, "TopicTest", 1)
	w.stop()
	if out := w.stdout.String(); !strings.Contains(out, " topics\nTOPIC ") || !strings.Contains(out, "R--,RW-") {
		t.Errorf("watch topics printed\n%s", out)
	}
	if q := f.last(t).query; !strings.HasPrefix(q, "detail=") {
		t.Errorf("asked %q", q)
	}
}

func TestWatchReportsAnOutageOnce(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	f.on("GET /v1/members", 500, `{"error":"boom"}`)
	w := startWatch(t, "watch", "members", "--http", f.addr())
	// The first try and a retry after backoff fail alike.
	testutil.Eventually(t, 10*time.Second, func() error {
		if n := len(f.requests()); n < 2 {
			return fmt.Errorf("%d requests", n)
		}
		return nil
	})
	f.on("GET /v1/members", 200, `[{"name":"n1","addr":"h:1","status":"alive","tags":{},"since":"2026-12-08T10:00:00Z"}]`)
	w.stdout.waitFor(t, "n1", 1)
	if code := w.stop(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if got := strings.Count(w.stderr.String(), "boom (retrying)"); got != 1 {
		t.Errorf("the outage was reported %d times:\n%s", got, w.stderr.String())
	}
}

func TestWatchEndsOnRefusal(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	f.on("GET /v1/topics/bad|name", 400, `{"error":"topic name \"bad|name\" is not allowed"}`)
	r := run(t, "", "watch", "route", "bad|name", "--http", f.addr())
	if r.code != 1 || r.stderr != "namecast watch: topic name \"bad|name\" is not allowed\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
