package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// FuzzHTTPAPI replays arbitrary requests into one agent's HTTP handler.
// Whatever the method, path and body: no panic, no 5xx (but 502 for a join
// that reached no one), every error answered as {"error": "..."} (a
// redirect to the clean path is not an error), and the registrations
// unchanged unless the request was a write that succeeded.
// Seeds are the f.Add calls below plus testdata/fuzz/FuzzHTTPAPI.
//
// POST /v1/join is left out: it resolves host names, which would send DNS
// queries off the machine; its decoding is the same decodeBody as every
// other write.
func FuzzHTTPAPI(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add(s.method, s.target, []byte(s.body))
	}
	a := startLone(f)
	handler := a.Handler()
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		req, err := http.NewRequest(method, "http://127.0.0.1"+target, bytes.NewReader(body))
		if err != nil || path.Clean(req.URL.Path) == "/v1/join" {
			return
		}
		// As the CLI sends it, so inputs reach the handlers; the guard in
		// front of them has its own tests (http_guard_test.go).
		req.Header.Set("Content-Type", "application/json")
		// Blocking queries may wait up to 10 minutes; an input gets 50 ms.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		before := registrations(a)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req.WithContext(ctx))
		after := registrations(a)
		defer resetRegistrations(a)

		status := rec.Code
		if status >= 500 && !(status == http.StatusBadGateway && req.URL.Path == "/v1/join") {
			t.Fatalf("%s %q: %d %s", method, target, status, rec.Body)
		}
		redirect := status/100 == 3 && rec.Header().Get("Location") != "" // ServeMux cleaning the path
		if status != http.StatusOK && !redirect {
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
				t.Fatalf("%s %q: %d answered %q, not {\"error\": ...}", method, target, status, rec.Body)
			}
		}
		write := method == http.MethodPut || method == http.MethodDelete || method == http.MethodPost
		if (status != http.StatusOK || !write) && before != after {
			t.Fatalf("%s %q (%d) changed the registrations:\nbefore %s\nafter  %s", method, target, status, before, after)
		}
		if status == http.StatusOK && method == http.MethodPut && req.URL.Path == "/v1/urls" {
			checkURLRegistered(t, a, rec.Body.Bytes())
		}
	})
}

// checkURLRegistered checks that an accepted URL is served.
func checkURLRegistered(t *testing.T, a *Server, answer []byte) {
	var u struct{ URL, Interface, Category string }
	if err := json.Unmarshal(answer, &u); err != nil {
		t.Fatalf("PUT /v1/urls answered %q: %v", answer, err)
	}
	if !slices.Contains(a.table.URLs(u.Interface, u.Category), u.URL) {
		t.Fatalf("PUT /v1/urls accepted %+v, which is not served", u)
	}
}

// registrations is everything a write could change: this agent's records,
// the cluster rules, and the TTL deadlines.
func registrations(a *Server) string {
	d := a.table.Digest()
	a.ttl.mu.Lock()
	defer a.ttl.mu.Unlock()
	return fmt.Sprint(d[a.cfg.Node], d[routes.RulesOrigin], len(a.ttl.deadlines))
}

// resetRegistrations withdraws whatever an input registered, so every
// input starts from the same empty registry with no TTL pending.
func resetRegistrations(a *Server) {
	a.regMu.Lock()
	var keys []string
	for _, r := range a.table.LocalRecords("") {
		keys = append(keys, r.Key())
	}
	a.host.Apply(nil, keys)
	a.ttl.mu.Lock()
	clear(a.ttl.deadlines)
	a.ttl.mu.Unlock()
	a.regMu.Unlock()
	var rules []string
	s, _ := a.table.Snapshot(routes.RulesOrigin)
	for _, op := range s.Ops {
		if op.Rec != nil {
			rules = append(rules, op.Key)
		}
	}
	a.host.ApplyRules(nil, rules)
}

type httpSeed struct{ method, target, body string }

var httpSeeds = []httpSeed{
	{"GET", "/v1/health", ""},
	{"GET", "/v1/members", ""},
	{"GET", "/v1/topics", ""},
	{"GET", "/v1/topics/Orders?index=1&wait=1s", ""},
	{"GET", "/v1/topics?index=abc", ""},
	{"GET", "/v1/topics?index=99999999&wait=10m", ""},
	{"GET", "/v1/clusters", ""},
	{"GET", "/v1/services", ""},
	{"GET", "/v1/services/com.example.Greeter?category=consumers", ""},
	{"GET", "/v1/services/x?category=a%2Fb", ""},
	{"GET", "/metrics", ""},
	{"GET", "/v1/nothing", ""},
	{"PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","brokerId":0,"addr":"10.0.0.1:10911","topics":{"T":{"readQueueNums":4,"writeQueueNums":4,"perm":6}},"ttl":"30s"}`},
	{"PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","brokerId":1,"addr":"10.0.0.2:10911","haAddr":"10.0.0.2:10912"}`},
	{"PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"a/b":{}}}`},
	{"PUT", "/v1/brokers", `{"cluster":`},
	{"PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","brokerId":"zero","addr":"1.2.3.4:5"}`},
	{"PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","ttl":"soon"}`},
	{"POST", "/v1/brokers", `{}`},
	{"DELETE", "/v1/brokers/c/b/0", ""},
	{"DELETE", "/v1/brokers/c/b/x", ""},
	{"PUT", "/v1/urls", `{"url":"dubbo://10.0.0.5:20880/com.example.Greeter?version=1.0.0","ttl":"2s"}`},
	{"PUT", "/v1/urls", `{"url":"route://0.0.0.0/com.example.Greeter?category=routers&dynamic=false&rule=x"}`},
	{"PUT", "/v1/urls", `{"url":"route://0.0.0.0/com.example.Greeter?category=routers&dynamic=false","ttl":"5s"}`},
	{"PUT", "/v1/urls", `{"url":"dubbo://h/I?category=a/b"}`},
	{"PUT", "/v1/urls", `{"url":"not a url"}`},
	{"DELETE", "/v1/urls?url=dubbo%3A%2F%2F10.0.0.5%3A20880%2Fcom.example.Greeter", ""},
	{"DELETE", "/v1/urls", ""},
	{"POST", "/v1/keys", `{"op":"list"}`},
	{"POST", "/v1/keys", `{"op":"install","key":"not base64"}`},
	{"POST", "/v1/leave", ""},
	{"PATCH", "/v1/urls", "{}"},
	{"GET", "/v1/topics/" + strings.Repeat("T", 200), ""},
}
