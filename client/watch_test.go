package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

type event[T any] struct {
	v   T
	err error
}

// startWatch runs run on its own goroutine, sending what fn hears to the
// returned channel; stop cancels it and returns what it returned.
func startWatch[T any](t *testing.T, run func(context.Context, func(T, error)) error) (events <-chan event[T], stop func() error) {
	t.Helper()
	ch := make(chan event[T], 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(v T, err error) { ch <- event[T]{v, err} }) }()
	stopped := false
	stop = func() error {
		t.Helper()
		cancel()
		if stopped {
			return nil
		}
		stopped = true
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("watch did not return after its context was cancelled")
			return nil
		}
	}
	t.Cleanup(func() { stop() })
	return ch, stop
}

func recv[T any](t *testing.T, ch <-chan event[T]) event[T] {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not call fn")
		return event[T]{}
	}
}

const routeA = `{"queueDatas":[{"brokerName":"a","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}],"brokerDatas":[{"cluster":"c","brokerName":"a","brokerAddrs":{"0":"h:1"}}]}`
const routeAB = `{"queueDatas":[{"brokerName":"a","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0},{"brokerName":"b","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0}],"brokerDatas":[{"cluster":"c","brokerName":"a","brokerAddrs":{"0":"h:1"}},{"cluster":"c","brokerName":"b","brokerAddrs":{"0":"h:2"}}]}`

func TestWatchFiresOnChange(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics/T", routeA)
	events, stop := startWatch(t, func(ctx context.Context, fn func(TopicRoute, error)) error {
		return c.WatchTopicRoute(ctx, "T", fn)
	})
	if e := recv(t, events); e.err != nil || len(e.v.BrokerDatas) != 1 {
		t.Fatalf("first answer %+v", e)
	}
	first := f.next(t)
	if first.RawQuery != "wait=300s" {
		t.Errorf("first query %q, want no index", first.RawQuery)
	}
	blocked := f.next(t)
	if want := fmt.Sprintf("index=%d&wait=300s", f.currentIndex()); blocked.RawQuery != want {
		t.Errorf("second query %q, want %q", blocked.RawQuery, want)
	}
	// A change elsewhere wakes the query but must not reach fn ...
	f.touch()
	f.next(t)
	// ... so the next thing fn hears is the real change.
	f.set("/v1/topics/T", routeAB)
	if e := recv(t, events); e.err != nil || len(e.v.BrokerDatas) != 2 {
		t.Fatalf("after the change, fn heard %+v", e)
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("watch returned %v, want context.Canceled", err)
	}
}

func TestWatchWaitsForMissingTopic(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	events, _ := startWatch(t, func(ctx context.Context, fn func(TopicRoute, error)) error {
		return c.WatchTopicRoute(ctx, "T", fn)
	})
	if e := recv(t, events); !IsNotFound(e.err) {
		t.Fatalf("first answer %+v, want not found", e)
	}
	f.next(t)
	// The 404's index makes the next query block rather than spin.
	if r := f.next(t); r.Query.Get("index") == "" {
		t.Errorf("query after a 404 does not block: %q", r.RawQuery)
	}
	f.touch()
	f.next(t)
	f.set("/v1/topics/T", routeA)
	if e := recv(t, events); e.err != nil || len(e.v.QueueDatas) != 1 {
		t.Fatalf("after the topic appeared, fn heard %+v", e)
	}
	f.set("/v1/topics/T", "")
	if e := recv(t, events); !IsNotFound(e.err) {
		t.Fatalf("after the topic went, fn heard %+v", e)
	}
}

func TestWatchBacksOffOnErrors(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	c.backoffMin, c.backoffMax = 20*time.Millisecond, 60*time.Millisecond
	f.set("/v1/members", `[{"name":"n1","addr":"h:1","status":"alive","tags":{}}]`)
	events, _ := startWatch(t, c.WatchMembers)
	if e := recv(t, events); e.err != nil || len(e.v) != 1 {
		t.Fatalf("first answer %+v", e)
	}
	f.next(t)
	f.next(t) // blocked
	// The request after the blocked one meets the first failure: it and the
	// retries after it are the ones to time. Counting from the end instead
	// breaks when the watch's next query lands before f.requests() is read.
	base := len(f.requests())
	failures := []fakeAnswer{{code: 500, body: `{"error":"boom"}`}, {code: 503, body: `{"error":"leaving"}`}, {code: 502}, {code: 500}}
	f.fail(failures...)
	f.touch()
	for i := range failures {
		if e := recv(t, events); e.err == nil {
			t.Fatalf("failure %d: fn heard %+v", i, e)
		}
	}
	// Once the agent answers again fn hears its state, although unchanged.
	if e := recv(t, events); e.err != nil || len(e.v) != 1 {
		t.Fatalf("after recovering, fn heard %+v", e)
	}
	reqs := f.requests()
	reqs = reqs[base : base+len(failures)+1]
	wantGaps := []time.Duration{20, 40, 60, 60} // ms: doubling, capped
	for i, want := range wantGaps {
		if gap := reqs[i+1].At.Sub(reqs[i].At); gap < want*time.Millisecond {
			t.Errorf("retry %d came %v after the failure, want at least %vms", i+1, gap, want)
		}
		if q := reqs[i+1].Query.Get("index"); q != "" {
			t.Errorf("retry %d blocks on index %s; a retry must ask for the current state", i+1, q)
		}
	}
}

func TestWatchStopsOnCancelDuringBackoff(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	c.backoffMin = time.Hour
	f.fail(fakeAnswer{code: 500})
	events, stop := startWatch(t, c.WatchServices)
	if e := recv(t, events); e.err == nil {
		t.Fatalf("fn heard %+v, want the failure", e)
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("watch returned %v", err)
	}
}

func TestWatchEndsOnPermanentRefusal(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	f.fail(fakeAnswer{code: 400, body: `{"error":"bad topic name"}`})
	var heard error
	err := c.WatchTopicRoute(context.Background(), "bad/name", func(_ TopicRoute, err error) { heard = err })
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 400 || heard != err {
		t.Errorf("watch returned %v after fn heard %v", err, heard)
	}
}

func TestWatchPacesAnswersWithoutIndex(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	c.backoffMin = 30 * time.Millisecond
	f.fail(fakeAnswer{code: 200, body: `{"topics":["T"]}`, noIndex: true})
	f.set("/v1/topics", `{"topics":["T"]}`)
	events, _ := startWatch(t, c.WatchTopics)
	recv(t, events)
	a, b := f.next(t), f.next(t)
	if gap := b.At.Sub(a.At); gap < 30*time.Millisecond {
		t.Errorf("asked again after %v; an answer without an index must not make the loop spin", gap)
	}
}

func TestEveryWatchFollowsItsView(t *testing.T) {
	testutil.CheckLeaks(t)
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics", `{"topics":["T"]}`)
	f.set("/v1/clusters", `{"brokerAddrTable":{},"clusterAddrTable":{"c":["a"]}}`)
	f.set("/v1/services", `{"services":["com.foo.Bar"]}`)
	f.set("/v1/services/com.foo.Bar?category=routers", `{"urls":["route://h/com.foo.Bar"]}`)
	heard := make(chan string, 10)
	check := func(name, path, want string, run func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- run(ctx) }()
		// Skip what the previous watch still asked: the path must come up.
		for f.next(t).EscapedPath != path {
		}
		select {
		case got := <-heard:
			if got != want {
				t.Errorf("%s heard %s, want %s", name, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not call fn", name)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("%s returned %v", name, err)
		}
	}
	check("WatchTopics", "/v1/topics", "[T]", func(ctx context.Context) error {
		return c.WatchTopics(ctx, func(v []string, _ error) { heard <- fmt.Sprint(v) })
	})
	check("WatchClusters", "/v1/clusters", "map[c:[a]]", func(ctx context.Context) error {
		return c.WatchClusters(ctx, func(v ClusterInfo, _ error) { heard <- fmt.Sprint(v.ClusterAddrTable) })
	})
	check("WatchServices", "/v1/services", "[com.foo.Bar]", func(ctx context.Context) error {
		return c.WatchServices(ctx, func(v []string, _ error) { heard <- fmt.Sprint(v) })
	})
	check("WatchURLs", "/v1/services/com.foo.Bar", "[route://h/com.foo.Bar]", func(ctx context.Context) error {
		return c.WatchURLs(ctx, "com.foo.Bar", CategoryRouters, func(v []string, _ error) { heard <- fmt.Sprint(v) })
	})
}
