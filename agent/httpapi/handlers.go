package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/routes"
)

const (
	maxBodyBytes   = 1 << 20
	maxWait        = 10 * time.Minute
	defaultWait    = 5 * time.Minute
	indexHeader    = "X-Namecast-Index"
	readTimeout    = 10 * time.Second
	idleConnection = 2 * time.Minute
)

// httpError is an error with the status it answers as.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &httpError{status, fmt.Sprintf(format, args...)}
}

// handler is an endpoint: it returns a value to encode as JSON, or an error.
type handler func(r *http.Request) (any, error)

// methods routes one path by method, answering 405 in JSON otherwise.
type methods map[string]handler

// endpoint wraps a set of methods with everything every answer shares:
// method dispatch, auth for writes, the 503 while leaving, blocking-query
// waits, the index header, JSON encoding and metrics. Its blocking queries
// wait on the table's global index; see watched.
func (s *Server) endpoint(ms methods) http.Handler { return s.watched(nil, ms) }

// watched is endpoint for reads whose answer depends on one view of the
// table, named by view: a blocking query returns when that view changed
// (or at its wait), and X-Namecast-Index is the index of the last change
// the answer could see (routes.Table.IndexOf), not the table's.
func (s *Server) watched(view func(*http.Request) routes.Watch, ms methods) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		viewOf := view
		if viewOf == nil || s.globalWatches.Load() || r.Method != http.MethodGet {
			viewOf = wholeTable
		}
		h, err := s.route(ms, r, viewOf)
		// The index is read before the answer: a change in between then
		// makes the next blocking query return instead of being missed.
		w.Header().Set(indexHeader, strconv.FormatUint(s.table.IndexOf(viewOf(r)), 10))
		var v any
		if err == nil {
			v, err = h(r)
		}
		if err != nil {
			writeError(w, err)
		} else {
			writeJSON(w, http.StatusOK, v)
		}
		s.m().MeasureSince([]string{"http", strings.ToLower(r.Method)}, start)
	})
}

func (s *Server) route(ms methods, r *http.Request, view func(*http.Request) routes.Watch) (handler, error) {
	if ms == nil {
		return nil, errorf(http.StatusNotFound, "no such endpoint: %s %s (see the API list in the README)", r.Method, r.URL.Path)
	}
	h, ok := ms[r.Method]
	if !ok {
		allowed := make([]string, 0, len(ms))
		for m := range ms {
			allowed = append(allowed, m)
		}
		return nil, errorf(http.StatusMethodNotAllowed, "%s does not take %s; use %s", r.URL.Path, r.Method, strings.Join(allowed, " or "))
	}
	if r.Method == http.MethodGet {
		if err := s.block(r, view); err != nil {
			return nil, err
		}
		return h, nil
	}
	if s.agent.Leaving() {
		return nil, errorf(http.StatusServiceUnavailable, "agent is leaving the cluster; register with another agent")
	}
	if s.cfg.Token != "" {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
			return nil, errorf(http.StatusForbidden, "write calls need the agent's token: send Authorization: Bearer <token>")
		}
	}
	return h, nil
}

// block implements blocking queries: with ?index=N it waits until the
// index of the request's view passes N, or ?wait (default 5m, at most 10m)
// runs out.
func (s *Server) block(r *http.Request, view func(*http.Request) routes.Watch) error {
	q := r.URL.Query()
	raw := q.Get("index")
	if raw == "" {
		return nil
	}
	index, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return errorf(http.StatusBadRequest, "index %q must be a non-negative integer (the X-Namecast-Index of a previous answer)", raw)
	}
	wait := defaultWait
	if s := q.Get("wait"); s != "" {
		if wait, err = time.ParseDuration(s); err != nil || wait < 0 {
			return errorf(http.StatusBadRequest, "wait %q must be a duration like 30s, at most 10m", s)
		}
		wait = min(wait, maxWait)
	}
	if index > s.table.Index() {
		// An index from the future was handed out by an earlier run of
		// this agent (indexes restart at 1): answer now, so the client
		// learns the current index instead of blocking for the whole wait.
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel) // waits end at shutdown
	defer stop()
	s.table.WaitFor(ctx, view(r), index)
	return nil
}

// decodeBody reads a JSON body of at most 1 MiB into v, refusing unknown
// fields so a misspelt field is an error rather than a silent default.
func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, "request body is over the %d-byte limit", maxBodyBytes)
		}
		return errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return errorf(http.StatusBadRequest, "request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "request body: %s", describeJSONError(err))
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "request body: unexpected data after the JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %q must be %s, got %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the body ends before the JSON value does"
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ") + " (check the spelling against the API)"
	}
	return err.Error()
}

func jsonKind(kind string) string {
	switch kind {
	case "int", "int64", "int32", "uint64":
		return "an integer"
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "bool":
		return "true or false"
	}
	return kind
}

// writeJSON writes v with &, < and > as themselves (a Dubbo URL's
// parameters read as written): answers are JSON for programs and people,
// never HTML.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

func parseTTL(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d > 24*time.Hour {
		return 0, errorf(http.StatusBadRequest, "ttl %q must be a duration from 1s to 24h, like \"30s\"", s)
	}
	return d, nil
}
