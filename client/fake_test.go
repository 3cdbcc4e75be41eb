package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAgent emulates the HTTP contract (the README's HTTP API) in memory: literal
// JSON answers per GET path, the index and blocking queries, write answers
// per method and path, and canned failures served ahead of everything.
type fakeAgent struct {
	srv     *httptest.Server
	arrived chan fakeRequest // every request as it arrives

	mu      sync.Mutex
	index   uint64
	changed chan struct{}
	gets    map[string]string // path, or path?category=C → JSON; absent → 404
	writes  map[string]string // "METHOD path" → JSON answer; absent → 405
	fails   []fakeAnswer
	reqs    []fakeRequest
}

type fakeAnswer struct {
	code    int
	body    string
	noIndex bool // leave out the index header
	index   string
}

type fakeRequest struct {
	Method, EscapedPath, RawQuery string
	Query                         url.Values
	Header                        http.Header
	Body                          string
	At                            time.Time
}

func newFakeAgent(t *testing.T) *fakeAgent {
	t.Helper()
	f := &fakeAgent{
		arrived: make(chan fakeRequest, 1000),
		index:   1, // as routes.Table: index 0 never blocks
		changed: make(chan struct{}),
		gets:    map[string]string{},
		writes:  map[string]string{},
	}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a client of the fake with its own transport, closed with
// the test so no keep-alive goroutine outlives it.
func (f *fakeAgent) client(t *testing.T) *Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := NewClient(Config{Address: f.srv.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// set answers GETs of key with body from now on, and grows the index.
func (f *fakeAgent) set(key, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if body == "" {
		delete(f.gets, key)
	} else {
		f.gets[key] = body
	}
	f.bumpLocked()
}

// touch grows the index without changing any answer, as a change to a view
// the watcher does not look at would.
func (f *fakeAgent) touch() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bumpLocked()
}

func (f *fakeAgent) bumpLocked() {
	f.index++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeAgent) answerWrite(method, path, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes[method+" "+path] = body
}

func (f *fakeAgent) fail(answers ...fakeAnswer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails = append(f.fails, answers...)
}

func (f *fakeAgent) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.reqs...)
}

func (f *fakeAgent) currentIndex() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.index
}

// next returns the next request to arrive, failing the test if none does
// within a generous deadline.
func (f *fakeAgent) next(t *testing.T) fakeRequest {
	t.Helper()
	select {
	case r := <-f.arrived:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the fake agent")
		return fakeRequest{}
	}
}

func (f *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	rec := fakeRequest{Method: r.Method, EscapedPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body), At: time.Now()}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	var fail *fakeAnswer
	if len(f.fails) > 0 {
		fail = &f.fails[0]
		f.fails = f.fails[1:]
	}
	index := f.index
	f.mu.Unlock()
	select {
	case f.arrived <- rec:
	default: // no test reads this many; never block the server on it
	}

	switch {
	case fail != nil:
		if !fail.noIndex {
			w.Header().Set(IndexHeader, strconv.FormatUint(index, 10))
		}
		if fail.index != "" {
			w.Header().Set(IndexHeader, fail.index)
		}
		w.WriteHeader(fail.code)
		io.WriteString(w, fail.body)
	case len(body) > 1<<20:
		f.answer(w, http.StatusRequestEntityTooLarge, `{"error":"body over 1 MiB"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, f.get("/metrics"))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/"):
		f.serveQuery(w, r)
	default:
		f.mu.Lock()
		answer, ok := f.writes[r.Method+" "+r.URL.Path]
		f.mu.Unlock()
		if !ok {
			f.answer(w, http.StatusMethodNotAllowed, `{"error":"method not allowed"}`)
			return
		}
		f.touch()
		f.answer(w, http.StatusOK, answer)
	}
}

func (f *fakeAgent) get(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets[key]
}

func (f *fakeAgent) serveQuery(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after uint64
	wait := 5 * time.Minute
	var err error
	if s := q.Get("index"); s != "" {
		if after, err = strconv.ParseUint(s, 10, 64); err != nil {
			f.answer(w, http.StatusBadRequest, `{"error":"bad index"}`)
			return
		}
	}
	if s := q.Get("wait"); s != "" {
		if wait, err = time.ParseDuration(s); err != nil || wait <= 0 {
			f.answer(w, http.StatusBadRequest, `{"error":"bad wait"}`)
			return
		}
		wait = min(wait, 10*time.Minute)
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	for {
		f.mu.Lock()
		index, changed := f.index, f.changed
		f.mu.Unlock()
		if index > after || ctx.Err() != nil {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
	key := r.URL.Path
	if c := q.Get("category"); c != "" {
		key += "?category=" + c
	}
	if body := f.get(key); body != "" {
		f.answer(w, http.StatusOK, body)
		return
	}
	msg, _ := json.Marshal(map[string]string{"error": fmt.Sprintf("unknown: %s", r.URL.Path)})
	f.answer(w, http.StatusNotFound, string(msg))
}

// answer writes the index as of now, so a write's answer already shows the
// index its change produced.
func (f *fakeAgent) answer(w http.ResponseWriter, code int, body string) {
	w.Header().Set(IndexHeader, strconv.FormatUint(f.currentIndex(), 10))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	io.WriteString(w, body)
}
