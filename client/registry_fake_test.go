package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/dubbo"
)

// urlAgent is an in-memory agent for Registry tests: the /v1/urls,
// /v1/services, /v1/health and /v1/members endpoints with real state and
// blocking queries, plus knobs to make it fail or "restart".
type urlAgent struct {
	srv *httptest.Server

	mu         sync.Mutex
	index      uint64
	changed    chan struct{}
	shutdown   chan struct{} // closed to answer every blocked query now
	inc        int
	urls       map[string]map[string][]string // interface → category → sorted URLs
	down       bool                           // every request answers 503
	failWrites int                            // this many next writes answer 503
	writes     []string                       // "PUT url ttl" / "DELETE url", successful or not
	// stall, when set, holds the next PUT after it is read and before it
	// is applied, until the channel is closed; inWrite counts writes
	// being handled.
	stall   chan struct{}
	inWrite sync.WaitGroup
}

func newURLAgent(t *testing.T) *urlAgent {
	t.Helper()
	a := &urlAgent{index: 1, changed: make(chan struct{}), shutdown: make(chan struct{}), inc: 1, urls: map[string]map[string][]string{}}
	a.srv = httptest.NewServer(a)
	t.Cleanup(func() {
		a.srv.CloseClientConnections()
		a.srv.Close()
	})
	return a
}

// registry returns a Registry on a with a fast retry period and its own
// transport, both closed with the test.
func (a *urlAgent) registry(t *testing.T, opts RegistryOptions) *Registry {
	t.Helper()
	tr := &http.Transport{}
	c, err := NewClient(Config{Address: a.srv.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	c.backoffMin = 20 * time.Millisecond
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = 100 * time.Millisecond
	}
	opts.Logger = testLogger(opts.Logger)
	r, err := NewRegistry(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		tr.CloseIdleConnections()
	})
	return r
}

func (a *urlAgent) bumpLocked() {
	a.index++
	close(a.changed)
	a.changed = make(chan struct{})
}

// add registers raw directly, as another process on another agent would.
func (a *urlAgent) add(t *testing.T, raw string) {
	t.Helper()
	u := dubbo.MustParse(raw)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.putLocked(u)
}

// remove withdraws raw directly.
func (a *urlAgent) remove(t *testing.T, raw string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deleteLocked(dubbo.MustParse(raw))
}

func (a *urlAgent) putLocked(u dubbo.URL) {
	cats := a.urls[u.Interface()]
	if cats == nil {
		cats = map[string][]string{}
		a.urls[u.Interface()] = cats
	}
	if !slices.Contains(cats[u.Category()], u.String()) {
		cats[u.Category()] = append(cats[u.Category()], u.String())
		slices.Sort(cats[u.Category()])
		a.bumpLocked()
	}
}

func (a *urlAgent) deleteLocked(u dubbo.URL) bool {
	cats := a.urls[u.Interface()]
	i := slices.Index(cats[u.Category()], u.String())
	if i < 0 {
		return false
	}
	cats[u.Category()] = slices.Delete(cats[u.Category()], i, i+1)
	if len(cats[u.Category()]) == 0 {
		delete(cats, u.Category())
	}
	if len(cats) == 0 {
		delete(a.urls, u.Interface())
	}
	a.bumpLocked()
	return true
}

// has reports whether raw is registered.
func (a *urlAgent) has(raw string) bool {
	u := dubbo.MustParse(raw)
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.urls[u.Interface()][u.Category()], u.String())
}

// How a fake restart looks from the client.
type restartMode int

const (
	// connsBreak: every open connection breaks, as when the process dies.
	connsBreak restartMode = iota
	// swift: blocked queries are answered at once, unchanged, as an agent
	// does while shutting down, and the new agent's index starts over
	// below the clients' before they ask again.
	swift
	// incarnationOnly: nothing breaks and the index goes on growing; only
	// the incarnation tag tells.
	incarnationOnly
)

// restart forgets every dynamic URL and starts a new incarnation, as a
// restarted agent would (persistent rules stay: the cluster keeps them).
func (a *urlAgent) restart(mode restartMode) {
	if mode == connsBreak {
		defer a.srv.CloseClientConnections()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if mode == swift {
		close(a.shutdown)
		a.shutdown = make(chan struct{})
		a.index = 0
	}
	for iface, cats := range a.urls {
		for cat, list := range cats {
			list = slices.DeleteFunc(list, func(s string) bool { return dubbo.MustParse(s).Dynamic() })
			if len(list) == 0 {
				delete(cats, cat)
			} else {
				cats[cat] = list
			}
		}
		if len(cats) == 0 {
			delete(a.urls, iface)
		}
	}
	a.inc++
	a.bumpLocked()
}

func (a *urlAgent) setDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
}

func (a *urlAgent) failNextWrites(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failWrites = n
}

func (a *urlAgent) writeLog() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.writes)
}

func (a *urlAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	down := a.down
	a.mu.Unlock()
	if down {
		a.reply(w, http.StatusServiceUnavailable, map[string]string{"error": "down"})
		return
	}
	switch {
	case r.Method == http.MethodGet:
		a.block(r)
		a.serveGet(w, r)
	case r.URL.Path == "/v1/urls" && (r.Method == http.MethodPut || r.Method == http.MethodDelete):
		a.serveWrite(w, r)
	default:
		a.reply(w, http.StatusMethodNotAllowed, map[string]string{"error": "no"})
	}
}

// block waits as a blocking query does: until the index passes ?index or
// ?wait ends.
func (a *urlAgent) block(r *http.Request) {
	after, _ := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	wait, err := time.ParseDuration(r.URL.Query().Get("wait"))
	if err != nil {
		wait = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	for {
		a.mu.Lock()
		index, changed, shutdown := a.index, a.changed, a.shutdown
		a.mu.Unlock()
		if after == 0 || index > after {
			return
		}
		select {
		case <-changed:
		case <-shutdown:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (a *urlAgent) serveGet(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch path := r.URL.Path; {
	case path == "/v1/health":
		a.replyLocked(w, http.StatusOK, Health{Node: "fake", Status: HealthOK, Members: 1})
	case path == "/v1/members":
		a.replyLocked(w, http.StatusOK, []Member{{Name: "fake", Status: MemberAlive,
			Tags: map[string]string{tagIncarnation: strconv.Itoa(a.inc)}}})
	case path == "/v1/services":
		ifaces := []string{}
		for iface := range a.urls {
			ifaces = append(ifaces, iface)
		}
		slices.Sort(ifaces)
		a.replyLocked(w, http.StatusOK, map[string][]string{"services": ifaces})
	case strings.HasPrefix(path, "/v1/services/"):
		iface := strings.TrimPrefix(path, "/v1/services/")
		cat := r.URL.Query().Get("category")
		if cat == "" {
			cat = dubbo.CategoryProviders
		}
		if a.urls[iface] == nil {
			a.replyLocked(w, http.StatusNotFound, map[string]string{"error": "no URLs registered"})
			return
		}
		a.replyLocked(w, http.StatusOK, map[string][]string{"urls": append([]string{}, a.urls[iface][cat]...)})
	default:
		a.replyLocked(w, http.StatusNotFound, map[string]string{"error": "no such endpoint"})
	}
}

func (a *urlAgent) serveWrite(w http.ResponseWriter, r *http.Request) {
	a.inWrite.Add(1)
	defer a.inWrite.Done()
	var in struct{ URL, TTL string }
	var decodeErr error
	if r.Method == http.MethodPut {
		decodeErr = json.NewDecoder(r.Body).Decode(&in)
		a.mu.Lock()
		stall := a.stall
		a.stall = nil
		a.writes = append(a.writes, "PUT "+in.URL+" "+in.TTL)
		a.mu.Unlock()
		if stall != nil {
			<-stall // as an agent applies a request its client gave up on
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var raw string
	if r.Method == http.MethodPut {
		if decodeErr != nil {
			a.replyLocked(w, http.StatusBadRequest, map[string]string{"error": decodeErr.Error()})
			return
		}
		raw = in.URL
	} else {
		raw = r.URL.Query().Get("url")
		a.writes = append(a.writes, "DELETE "+raw)
	}
	if a.failWrites > 0 {
		a.failWrites--
		a.replyLocked(w, http.StatusServiceUnavailable, map[string]string{"error": "agent is leaving"})
		return
	}
	u, err := dubbo.Parse(raw)
	if err != nil || strings.ContainsAny(u.Interface(), "/*") {
		a.replyLocked(w, http.StatusBadRequest, map[string]string{"error": "bad url"})
		return
	}
	if r.Method == http.MethodDelete {
		if !a.deleteLocked(u) {
			a.replyLocked(w, http.StatusNotFound, map[string]string{"error": "not registered"})
			return
		}
		a.replyLocked(w, http.StatusOK, map[string]bool{"deleted": true})
		return
	}
	a.putLocked(u)
	a.replyLocked(w, http.StatusOK, RegisteredURL{URL: u.String(), Interface: u.Interface(), Category: u.Category()})
}

func (a *urlAgent) reply(w http.ResponseWriter, code int, v any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.replyLocked(w, code, v)
}

func (a *urlAgent) replyLocked(w http.ResponseWriter, code int, v any) {
	w.Header().Set(IndexHeader, strconv.FormatUint(a.index, 10))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
