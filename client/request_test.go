package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestQueryOptionsEncoding(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics", `{"topics":["T"]}`)
	tests := []struct {
		q    *QueryOptions
		want string
	}{
		{nil, ""},
		{&QueryOptions{}, ""},
		{&QueryOptions{WaitIndex: 1, WaitTime: 30 * time.Second}, "index=1&wait=30s"},
		{&QueryOptions{WaitIndex: 1, WaitTime: 10 * time.Minute}, "index=1&wait=600s"},
		{&QueryOptions{WaitTime: 1500 * time.Millisecond}, "wait=1.5s"},
	}
	for _, tt := range tests {
		if _, _, err := c.Topics(context.Background(), tt.q); err != nil {
			t.Fatal(err)
		}
		if got := f.next(t).RawQuery; got != tt.want {
			t.Errorf("%+v: query %q, want %q", tt.q, got, tt.want)
		}
	}
	// Blocking parameters sit beside a method's own.
	f.set("/v1/services/com.foo.Bar?category=routers", `{"urls":[]}`)
	if _, _, err := c.URLs(context.Background(), "com.foo.Bar", "routers", &QueryOptions{WaitIndex: 1}); err != nil {
		t.Fatal(err)
	}
	if got := f.next(t).RawQuery; got != "category=routers&index=1" {
		t.Errorf("URLs query %q", got)
	}
}

func TestQueryMeta(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics", `{"topics":["T"]}`)
	_, meta, err := c.Topics(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.LastIndex != f.currentIndex() || meta.LastIndex == 0 {
		t.Errorf("LastIndex %d, want %d", meta.LastIndex, f.currentIndex())
	}
	if meta.RequestTime <= 0 {
		t.Errorf("RequestTime %v", meta.RequestTime)
	}
}

func TestBlockingQueryReturnsOnChange(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics", `{"topics":["A"]}`)
	_, meta, err := c.Topics(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.next(t)
	type result struct {
		topics []string
		meta   *QueryMeta
		err    error
	}
	done := make(chan result, 1)
	go func() {
		topics, m, err := c.Topics(context.Background(), &QueryOptions{WaitIndex: meta.LastIndex, WaitTime: time.Minute})
		done <- result{topics, m, err}
	}()
	f.next(t) // the query is at the agent, blocked: now change something
	f.set("/v1/topics", `{"topics":["A","B"]}`)
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if fmt.Sprint(r.topics) != "[A B]" || r.meta.LastIndex <= meta.LastIndex {
			t.Errorf("got %v at index %d after %d", r.topics, r.meta.LastIndex, meta.LastIndex)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocking query did not return after the index grew")
	}
}

func TestBlockingQueryReturnsAtWait(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/topics", `{"topics":["A"]}`)
	index := f.currentIndex()
	_, meta, err := c.Topics(context.Background(), &QueryOptions{WaitIndex: index, WaitTime: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if meta.LastIndex != index {
		t.Errorf("LastIndex %d, want unchanged %d", meta.LastIndex, index)
	}
	if meta.RequestTime < 20*time.Millisecond {
		t.Errorf("answered after %v, before the wait ended", meta.RequestTime)
	}
}

func TestStatusErrors(t *testing.T) {
	tests := []struct {
		code      int
		body, msg string
	}{
		{404, `{"error":"unknown topic \"T\""}`, `unknown topic "T"`},
		{400, `{"error":"bad index"}`, "bad index"},
		{405, `{"error":"method not allowed"}`, "method not allowed"},
		{413, `{"error":"body over 1 MiB"}`, "body over 1 MiB"},
		{503, `{"error":"agent is leaving"}`, "agent is leaving"},
		{502, "upstream exploded\n", "upstream exploded"},
		{502, "", "Bad Gateway"},
		{500, `{}`, "Internal Server Error"},
	}
	f := newFakeAgent(t)
	c := f.client(t)
	for _, tt := range tests {
		f.fail(fakeAnswer{code: tt.code, body: tt.body})
		_, meta, err := c.TopicRoute(context.Background(), "T", nil)
		var se *StatusError
		if !errors.As(err, &se) {
			t.Errorf("%d %q: error %v is not a *StatusError", tt.code, tt.body, err)
			continue
		}
		if se.Code != tt.code || se.Message != tt.msg {
			t.Errorf("%d %q: got %d %q, want %q", tt.code, tt.body, se.Code, se.Message, tt.msg)
		}
		if IsNotFound(err) != (tt.code == 404) {
			t.Errorf("%d: IsNotFound = %v", tt.code, IsNotFound(err))
		}
		if meta == nil || meta.LastIndex == 0 {
			t.Errorf("%d: refusal lost its index: %+v", tt.code, meta)
		}
	}
	// Writes decode refusals the same way.
	f.fail(fakeAnswer{code: 503, body: `{"error":"agent is leaving"}`})
	_, err := c.RegisterURL(context.Background(), "dubbo://h:1/x", 0)
	if se := (*StatusError)(nil); !errors.As(err, &se) || se.Code != 503 || se.Message != "agent is leaving" {
		t.Errorf("write refusal: %v", err)
	}
}

func TestStatusErrorText(t *testing.T) {
	err := error(&StatusError{Code: 404, Message: `unknown topic "T"`})
	if got, want := err.Error(), `namecast: 404 Not Found: unknown topic "T"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !IsNotFound(fmt.Errorf("route: %w", err)) {
		t.Error("IsNotFound misses a wrapped 404")
	}
	if IsNotFound(nil) || IsNotFound(errors.New("404")) || IsNotFound(&StatusError{Code: 400}) {
		t.Error("IsNotFound holds for something other than a 404")
	}
}

func TestBadAnswers(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.fail(fakeAnswer{code: 200, index: "x1"})
	if _, _, err := c.Topics(context.Background(), nil); err == nil || !strings.Contains(err.Error(), IndexHeader) {
		t.Errorf("bad index header: %v", err)
	}
	f.fail(fakeAnswer{code: 200, body: "<html>"})
	if _, _, err := c.Topics(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "decoding") {
		t.Errorf("bad JSON: %v", err)
	}
	// An answer without the header is tolerated, with index 0.
	f.fail(fakeAnswer{code: 200, body: `{"topics":["T"]}`, noIndex: true})
	topics, meta, err := c.Topics(context.Background(), nil)
	if err != nil || meta.LastIndex != 0 || len(topics) != 1 {
		t.Errorf("no index header: %v %+v %v", topics, meta, err)
	}
}

func TestUnreachableAgent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := NewClient(Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Members(context.Background(), nil)
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T), want a *url.Error", err, err)
	}
	var se *StatusError
	if errors.As(err, &se) {
		t.Errorf("transport failure reads as a refusal: %v", err)
	}
}

func TestCancelBlockingQuery(t *testing.T) {
	f := newFakeAgent(t)
	c := f.client(t)
	f.set("/v1/members", `[]`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Members(ctx, &QueryOptions{WaitIndex: f.currentIndex(), WaitTime: time.Minute})
		done <- err
	}()
	f.next(t)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled query did not return")
	}
}

func TestIndexParsing(t *testing.T) {
	// The index is a uint64 end to end: no float rounding on large values.
	f := newFakeAgent(t)
	c := f.client(t)
	big := uint64(1<<63 + 12345)
	f.fail(fakeAnswer{code: 200, body: `[]`, index: strconv.FormatUint(big, 10)})
	_, meta, err := c.Members(context.Background(), nil)
	if err != nil || meta.LastIndex != big {
		t.Errorf("index %v, %v; want %d", meta, err, big)
	}
	_, _, _ = c.Members(context.Background(), &QueryOptions{WaitIndex: big, WaitTime: time.Millisecond})
	f.next(t)
	if got := f.next(t).Query.Get("index"); got != strconv.FormatUint(big, 10) {
		t.Errorf("sent index %q", got)
	}
}
