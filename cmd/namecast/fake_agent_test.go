package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAgent answers the HTTP contract (the README's HTTP API) from canned JSON per
// "METHOD path", with the index header and blocking GETs, so commands can be
// run against it and their requests checked.
type fakeAgent struct {
	srv *httptest.Server

	mu      sync.Mutex
	index   uint64
	changed chan struct{}
	answers map[string]cannedAnswer
	reqs    []seenRequest
}

type cannedAnswer struct {
	code int
	body string
}

type seenRequest struct {
	method, path, query, body string
	header                    http.Header
}

func newFakeAgent(t *testing.T) *fakeAgent {
	f := &fakeAgent{index: 1, changed: make(chan struct{}), answers: map[string]cannedAnswer{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAgent) addr() string { return f.srv.Listener.Addr().String() }

// on answers "METHOD path" with code and body from now on, and grows the
// index so blocked queries wake.
func (f *fakeAgent) on(key string, code int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[key] = cannedAnswer{code, body}
	f.index++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeAgent) requests() []seenRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seenRequest(nil), f.reqs...)
}

func (f *fakeAgent) last(t *testing.T) seenRequest {
	t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the fake agent")
	}
	return reqs[len(reqs)-1]
}

func (f *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, seenRequest{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(body), r.Header.Clone()})
	f.mu.Unlock()
	if r.Method == http.MethodGet {
		f.block(r)
	}
	f.mu.Lock()
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	index := f.index
	f.mu.Unlock()
	if !ok {
		a = cannedAnswer{http.StatusNotFound, `{"error":"no such endpoint: ` + r.Method + " " + r.URL.Path + `"}`}
	}
	w.Header().Set("X-Namecast-Index", strconv.FormatUint(index, 10))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.code)
	io.WriteString(w, a.body)
}

// block holds a GET with ?index=N until the index passes N or ?wait ends.
func (f *fakeAgent) block(r *http.Request) {
	after, err := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	if err != nil {
		return
	}
	wait, err := time.ParseDuration(r.URL.Query().Get("wait"))
	if err != nil {
		wait = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	for {
		f.mu.Lock()
		index, changed := f.index, f.changed
		f.mu.Unlock()
		if index > after {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs the binary's entry point in-process with args and stdin.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut strings.Builder
	c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, ctx: t.Context()}
	code := c.run(args)
	return result{code, out.String(), errOut.String()}
}

// ok runs args and fails the test unless they succeed.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := run(t, "", args...)
	if r.code != 0 {
		t.Fatalf("namecast %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}
