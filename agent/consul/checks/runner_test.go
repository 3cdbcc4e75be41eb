package checks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/agent/listener"
)

// recorder is what a runner told: reports and deregistrations, in order.
type recorder struct {
	mu      sync.Mutex
	reports []string // "id status"
	outputs []string
	gone    []string // service IDs
}

func (rec *recorder) config() Config {
	return Config{
		Report: func(id string, s State) {
			rec.mu.Lock()
			rec.reports = append(rec.reports, id+" "+s.Status)
			rec.outputs = append(rec.outputs, s.Output)
			rec.mu.Unlock()
		},
		Deregister: func(svc string) {
			rec.mu.Lock()
			rec.gone = append(rec.gone, svc)
			rec.mu.Unlock()
		},
	}
}

func (rec *recorder) seen() ([]string, []string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reports), slices.Clone(rec.gone)
}

func (rec *recorder) lastOutput() string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.outputs) == 0 {
		return ""
	}
	return rec.outputs[len(rec.outputs)-1]
}

func want(t *testing.T, rec *recorder, reports, gone []string) {
	t.Helper()
	synctest.Wait()
	r, g := rec.seen()
	if !slices.Equal(r, reports) || !slices.Equal(g, gone) {
		t.Fatalf("reports %q deregistered %q; want %q and %q", r, g, reports, gone)
	}
}

// A TTL check is critical ("TTL expired") once its TTL passes without an
// update; each update restarts the TTL; only changes of status are told.
func TestTTLCheckExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		r := New(rec.config())
		defer r.Close()
		if err := r.Set(catalog.CheckDef{ID: "web-ttl", ServiceID: "web", TTL: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		want(t, rec, nil, nil) // starts critical (Consul's default), in the record already: not told
		if err := r.UpdateTTL("web-ttl", catalog.Passing, "ok"); err != nil {
			t.Fatal(err)
		}
		want(t, rec, []string{"web-ttl passing"}, nil)
		time.Sleep(8 * time.Second)
		r.UpdateTTL("web-ttl", catalog.Passing, "still ok") // output only: not told, TTL restarted
		time.Sleep(8 * time.Second)
		want(t, rec, []string{"web-ttl passing"}, nil)
		if s, _ := r.State("web-ttl"); s.Output != "still ok" {
			t.Fatalf("State %v: want the latest output", s)
		}
		time.Sleep(3 * time.Second)
		want(t, rec, []string{"web-ttl passing", "web-ttl critical"}, nil)
		if out := rec.lastOutput(); out != "TTL expired" {
			t.Fatalf("output %q, want Consul's \"TTL expired\"", out)
		}
	})
}

// UpdateTTL refuses, in Consul's words, what it cannot do.
func TestUpdateTTLErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := New(Config{DialContext: refuse})
		defer r.Close()
		r.Set(catalog.CheckDef{ID: "tcp", TCP: "x:1", Interval: time.Minute})
		r.Set(catalog.CheckDef{ID: "ttl", TTL: time.Minute})
		for _, c := range []struct{ id, status, err string }{
			{"nope", catalog.Passing, `Unknown check ID "nope"`},
			{"tcp", catalog.Passing, `CheckID "tcp" does not have associated TTL`},
			{"ttl", "fine", `Unknown check status: "fine"`},
		} {
			if err := r.UpdateTTL(c.id, c.status, ""); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("UpdateTTL(%s, %s): %v, want %q", c.id, c.status, err, c.err)
			}
		}
		if err := r.Set(catalog.CheckDef{ID: "bad", TTL: time.Minute, Status: "ok"}); err == nil {
			t.Error("Set took a status that is not Consul's")
		}
	})
}

// A service whose check stays critical for DeregisterCriticalServiceAfter
// (at least Consul's minute) is deregistered; a passing moment in
// between starts the wait again.
func TestDeregisterCriticalServiceAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		r := New(rec.config())
		defer r.Close()
		r.Set(catalog.CheckDef{ID: "c1", ServiceID: "web", TTL: time.Hour, DeregisterCriticalServiceAfter: 10 * time.Second})
		time.Sleep(50 * time.Second)
		want(t, rec, nil, nil) // 10 s is raised to the 1 min minimum
		r.UpdateTTL("c1", catalog.Passing, "")
		r.UpdateTTL("c1", catalog.Critical, "down")
		time.Sleep(59 * time.Second)
		want(t, rec, []string{"c1 critical"}, nil) // passing then critical before delivery: one report, the latest
		time.Sleep(2 * time.Second)
		want(t, rec, []string{"c1 critical"}, []string{"web"})
		r.Set(catalog.CheckDef{ID: "c2", ServiceID: "api", TTL: time.Hour, Status: catalog.Passing, DeregisterCriticalServiceAfter: 2 * time.Minute})
		time.Sleep(10 * time.Minute)
		want(t, rec, []string{"c1 critical"}, []string{"web"}) // never critical: stays
	})
}

// A TCP check is passing while the address takes connections and
// critical once it refuses them, probed every interval.
func TestTCPCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := listener.NewMemory("svc")
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		var mu sync.Mutex
		up := true
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			defer mu.Unlock()
			if !up || addr != "10.0.0.1:80" {
				return nil, errors.New("dial tcp " + addr + ": connect: connection refused")
			}
			return ln.Dial(ctx)
		}
		rec := &recorder{}
		cfg := rec.config()
		cfg.DialContext = dial
		r := New(cfg)
		defer r.Close()
		defer ln.Close()
		r.Set(catalog.CheckDef{ID: "tcp", ServiceID: "web", TCP: "10.0.0.1:80", Interval: 5 * time.Second})
		want(t, rec, []string{"tcp passing"}, nil) // probed at once
		if out := rec.lastOutput(); out != "TCP connect 10.0.0.1:80: Success" {
			t.Fatalf("output %q", out)
		}
		mu.Lock()
		up = false
		mu.Unlock()
		time.Sleep(4 * time.Second)
		want(t, rec, []string{"tcp passing"}, nil)
		time.Sleep(time.Second)
		want(t, rec, []string{"tcp passing", "tcp critical"}, nil)
		if out := rec.lastOutput(); !strings.Contains(out, "connection refused") {
			t.Fatalf("output %q", out)
		}
	})
}

// An HTTP check is passing on 2xx, warning on 429, critical otherwise,
// with Consul's output; it sends the method, headers and body asked.
func TestHTTPCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ln := listener.NewMemory("svc")
		var mu sync.Mutex
		code, got := 200, ""
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			c := code
			got = req.Method + " " + req.Host + " " + req.Header.Get("X-Token") + " " + req.UserAgent()
			mu.Unlock()
			w.WriteHeader(c)
			w.Write([]byte("body-" + http.StatusText(c)))
		})}
		go srv.Serve(ln)
		rec := &recorder{}
		cfg := rec.config()
		cfg.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.Dial(ctx) }
		r := New(cfg)
		defer srv.Close()
		defer r.Close()
		r.Set(catalog.CheckDef{ID: "http", ServiceID: "web", HTTP: "http://web.local:8080/health", Method: "POST",
			Header: map[string][]string{"X-Token": {"t1"}, "Host": {"vhost"}}, Interval: 10 * time.Second})
		want(t, rec, []string{"http passing"}, nil)
		if out := rec.lastOutput(); out != "HTTP POST http://web.local:8080/health: 200 OK Output: body-OK" {
			t.Fatalf("output %q", out)
		}
		mu.Lock()
		if got != "POST vhost t1 Consul Health Check" {
			t.Fatalf("request %q", got)
		}
		code = 429
		mu.Unlock()
		time.Sleep(10 * time.Second)
		want(t, rec, []string{"http passing", "http warning"}, nil)
		mu.Lock()
		code = 503
		mu.Unlock()
		time.Sleep(10 * time.Second)
		want(t, rec, []string{"http passing", "http warning", "http critical"}, nil)
	})
}

// A check replaced or removed does nothing more: its timers and probes
// are stopped; Close stops everything and refuses new checks.
func TestReplacedRemovedAndClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		r := New(rec.config())
		r.Set(catalog.CheckDef{ID: "c", ServiceID: "web", TTL: 5 * time.Second, Status: catalog.Passing})
		r.Set(catalog.CheckDef{ID: "c", ServiceID: "web", TTL: time.Minute, Status: catalog.Passing})
		time.Sleep(10 * time.Second)
		want(t, rec, nil, nil) // the first TTL would have expired
		r.Remove("c")
		time.Sleep(2 * time.Minute)
		want(t, rec, nil, nil)
		r.Close()
		r.Close()
		if err := r.Set(catalog.CheckDef{ID: "d", TTL: time.Minute}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Set after Close: %v", err)
		}
	})
}

func refuse(context.Context, string, string) (net.Conn, error) { return nil, errors.New("refused") }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
