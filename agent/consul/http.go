package consul

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/routes"
)

// handler answers one request: a value written as JSON (nil: an empty
// 200), or an error (statusError: its status and text; any other: 500).
type handler func(w http.ResponseWriter, r *http.Request) (any, error)

// read answers a query: its value and its X-Consul-Index.
type read func(r *http.Request) (v any, index uint64, err error)

// statusError is an answer other than 200: Consul writes its errors as
// plain text with the status (agent/http.go).
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) error {
	return &statusError{code: code, msg: fmt.Sprintf(format, args...)}
}

// routes is every path the door answers; each names its methods.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	get := func(h handler) map[string]handler { return map[string]handler{"GET": h} }
	put := func(h handler) map[string]handler { return map[string]handler{"PUT": h} }
	handle := func(path string, ms map[string]handler) { mux.Handle(path, s.endpoint(path, ms)) }

	handle("/v1/agent/self", get(s.agentSelf))
	handle("/v1/agent/members", get(s.agentMembers))
	handle("/v1/agent/services", get(s.agentServices))
	handle("/v1/agent/service/{id}", get(s.agentService))
	handle("/v1/agent/checks", get(s.agentChecks))
	handle("/v1/agent/service/register", put(s.agentRegister))
	handle("/v1/agent/service/deregister/{id}", put(s.agentDeregister))
	handle("/v1/agent/check/register", put(s.checkRegister))
	handle("/v1/agent/check/deregister/{id}", put(s.checkDeregister))
	handle("/v1/agent/check/pass/{id}", put(s.checkTTL(catalog.Passing)))
	handle("/v1/agent/check/warn/{id}", put(s.checkTTL(catalog.Warning)))
	handle("/v1/agent/check/fail/{id}", put(s.checkTTL(catalog.Critical)))
	handle("/v1/agent/check/update/{id}", put(s.checkUpdate))
	handle("/v1/agent/health/service/name/{name}", get(s.agentHealthByName))
	handle("/v1/agent/health/service/id/{id}", get(s.agentHealthByID))
	handle("/v1/catalog/services", get(s.blocking(servicesWatch, s.catalogServices)))
	handle("/v1/catalog/service/{name}", get(s.blocking(serviceWatch, s.catalogService)))
	handle("/v1/catalog/nodes", get(s.blocking(membersWatch, s.catalogNodes)))
	handle("/v1/catalog/datacenters", get(s.catalogDatacenters))
	handle("/v1/health/service/{name}", get(s.blocking(serviceWatch, s.healthService)))
	handle("/v1/health/checks/{name}", get(s.blocking(serviceWatch, s.healthChecks)))
	handle("/v1/health/state/{state}", get(s.blocking(servicesWatch, s.healthState)))
	handle("/v1/status/leader", get(s.statusLeader))
	handle("/v1/status/peers", get(s.statusPeers))
	handle("/v1/kv/{key...}", map[string]handler{"GET": s.blocking(nil, s.kvGet), "PUT": s.kvPut, "DELETE": s.kvDelete})
	for path, msg := range refusedPaths {
		mux.Handle(path, s.endpoint(path, nil, msg))
	}
	mux.Handle("/", s.endpoint("other", nil, unknownPath))
	return mux
}

// Paths of Consul features this door does not have, refused with the
// error a Consul client recognises where there is one
// (docs/protocols/consul.md §5).
var refusedPaths = map[string]refusal{
	"/v1/acl/":           {http.StatusUnauthorized, "ACL support disabled"}, // acl.ErrDisabled
	"/v1/connect/":       {http.StatusBadRequest, "Connect must be enabled in order to use this endpoint"},
	"/v1/agent/connect/": {http.StatusBadRequest, "Connect must be enabled in order to use this endpoint"},
	"/v1/query":          {http.StatusBadRequest, "prepared queries are not served by namecast's Consul door: query /v1/health/service/{name} instead"},
	"/v1/query/":         {http.StatusBadRequest, "prepared queries are not served by namecast's Consul door: query /v1/health/service/{name} instead"},
	"/v1/session/":       {http.StatusBadRequest, "sessions (and KV locks) are not served by namecast's Consul door: its KV has no linearizable writes to lock with"},
	"/v1/txn":            {http.StatusBadRequest, "transactions are not served by namecast's Consul door: its KV has no linearizable writes"},
}

type refusal struct {
	code int
	msg  string
}

var unknownPath = refusal{http.StatusNotFound, ""}

// endpoint answers path with the handler of the request's method, after
// the checks every request passes (common); a refusal answers every
// method.
func (s *Server) endpoint(name string, ms map[string]handler, refused ...refusal) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var v any
		err := s.common(r)
		if err == nil {
			switch h, ok := ms[r.Method]; {
			case len(refused) > 0 && refused[0] == unknownPath:
				err = errorf(http.StatusNotFound, "404 page not found (namecast's Consul door serves the endpoints docs/protocols/consul.md lists)")
			case len(refused) > 0:
				err = errorf(refused[0].code, "%s", refused[0].msg)
			case !ok:
				err = errorf(http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
			default:
				v, err = h(w, r)
			}
		}
		s.setHeaders(w)
		if err != nil {
			s.writeError(w, err)
		} else if raw, ok := v.(rawValue); ok {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write(raw)
		} else if v != nil {
			writeJSON(w, r, v)
		}
		s.metrics.MeasureSinceWithLabels([]string{"consul", "request"}, start, labelsOf(name, r.Method))
	})
}

// common refuses what no endpoint serves: another datacenter, a
// consistent read, an Enterprise namespace or partition, and writes
// while the agent leaves.
func (s *Server) common(r *http.Request) error {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return errorf(http.StatusBadRequest, "Invalid query: %v", err)
	}
	if dc := q.Get("dc"); dc != "" && dc != s.cfg.Datacenter {
		return errorf(http.StatusInternalServerError, "No path to datacenter") // structs.ErrNoDCPath
	}
	if q.Has("consistent") {
		return errorf(http.StatusBadRequest, "namecast's Consul door serves no consistent reads: each agent answers from its replica of the registry (use the default or ?stale)")
	}
	for _, k := range []string{"ns", "partition"} {
		if v := q.Get(k); v != "" && v != "default" {
			return errorf(http.StatusBadRequest, "%s %q: namecast's Consul door has only the default %s", k, v, k)
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && s.cfg.Agent != nil && s.cfg.Agent.Leaving() {
		return errorf(http.StatusServiceUnavailable, "agent is leaving the cluster; register with another agent")
	}
	return nil
}

func (s *Server) setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Consul-KnownLeader", "true")
	h.Set("X-Consul-LastContact", "0")
	h.Set("X-Consul-Default-Acl-Policy", "allow")
}

func (s *Server) writeError(w http.ResponseWriter, err error) {
	code, msg := http.StatusInternalServerError, err.Error()
	var se *statusError
	if errors.As(err, &se) {
		code = se.code
	}
	if code >= 500 {
		s.metrics.IncrCounter([]string{"consul", "errors"}, 1)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprint(w, msg)
}

// writeJSON writes v as Consul does: indented with ?pretty.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	var b []byte
	if _, pretty := r.URL.Query()["pretty"]; pretty {
		b, _ = json.MarshalIndent(v, "", "    ")
	} else {
		b, _ = json.Marshal(v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// blocking answers a query as Consul's blocking queries do
// (https://developer.hashicorp.com/consul/api-docs/features/blocking):
// with ?index=N it answers once the query's index passes N, or when
// ?wait (default 5m, at most 10m, plus up to a sixteenth of it) runs
// out. The index is this agent's: it rises with every change the query
// can see (a KV query's is the cluster-wide time of its newest write).
// An index below N (another agent's, or one before a restart) answers at
// once, so the client starts over from ours.
func (s *Server) blocking(watch func(*http.Request) routes.Watch, answer read) handler {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		q := r.URL.Query()
		min, wait, err := blockingParams(q)
		if err != nil {
			return nil, err
		}
		var wt routes.Watch
		if watch != nil {
			wt = watch(r)
		}
		ctx, cancel := context.WithDeadline(r.Context(), time.Now().Add(wait))
		defer cancel()
		defer context.AfterFunc(s.ctx, cancel)()
		for {
			// The table's index before the answer: a change in between
			// wakes the next wait instead of being missed.
			before := s.table.IndexOf(wt)
			v, idx, err := answer(r)
			if err != nil && err != errNotFound { // a KV miss blocks as an answer does
				return nil, err
			}
			if idx == 0 {
				idx = 1 // Consul never answers index 0
			}
			if min == 0 || idx != min {
				w.Header().Set("X-Consul-Index", strconv.FormatUint(idx, 10))
				return v, err
			}
			if s.table.WaitFor(ctx, wt, before) <= before || ctx.Err() != nil { // the wait ran out, the client went or the door closes
				w.Header().Set("X-Consul-Index", strconv.FormatUint(idx, 10))
				return v, err
			}
		}
	}
}

// blockingParams reads ?index and ?wait as Consul's parseWait does.
func blockingParams(q url.Values) (min uint64, wait time.Duration, err error) {
	if raw := q.Get("index"); raw != "" {
		if min, err = strconv.ParseUint(raw, 10, 64); err != nil {
			return 0, 0, errorf(http.StatusBadRequest, "Invalid index")
		}
	}
	wait = defaultWait
	if raw := q.Get("wait"); raw != "" {
		if wait, err = time.ParseDuration(raw); err != nil || wait < 0 {
			return 0, 0, errorf(http.StatusBadRequest, "Invalid wait time")
		}
		wait = min2(wait, maxWait)
	}
	if wait > 0 {
		wait += rand.N(wait/16 + 1)
	}
	return min, wait, nil
}

func min2(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// guard keeps browser pages out, in front of every path: a request a
// browser sends (it carries Sec-Fetch-Site or Origin; tools send
// neither) must name an IP address or localhost as its Host (a page
// whose name was re-pointed at 127.0.0.1 names itself: DNS rebinding)
// and come from the same origin. Consul clients are tools and pass.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site, origin := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")
		if site != "" || origin != "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			host = strings.Trim(strings.ToLower(host), "[]")
			sameOrigin := site == "same-origin" || site == "none" || site == ""
			if origin != "" {
				u, err := url.Parse(origin)
				sameOrigin = sameOrigin && err == nil && strings.EqualFold(u.Host, r.Host)
			}
			if !(host == "localhost" || net.ParseIP(host) != nil) || !sameOrigin {
				s.metrics.IncrCounter([]string{"consul", "refused"}, 1)
				s.setHeaders(w)
				s.writeError(w, errorf(http.StatusForbidden, "a browser request to the Consul port must be same-origin and name an IP address or localhost as its Host (this guards against DNS rebinding and cross-site writes)"))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, max(maxBody, maxKVValue)+1)
		next.ServeHTTP(w, r)
	})
}

func labelsOf(endpoint, method string) []metrics.Label {
	return []metrics.Label{{Name: "endpoint", Value: endpoint}, {Name: "method", Value: method}}
}
