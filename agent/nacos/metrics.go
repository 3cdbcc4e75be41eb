package nacos

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// flushEvery is how often counts go to go-metrics (and gauges are set):
// labelled counters cost allocations we do not want per request.
const flushEvery = 2 * time.Second

// The door's series on /metrics (namecast_nacos_*):
//
//   - requests{type,code}: gRPC requests by type (a type no handler knows
//     is "other", so a client cannot grow the label set) and result (0,
//     or Nacos' error code); http_requests{route,status}: the 1.x API's.
//   - pushes{type,result}: NotifySubscriberRequest and
//     ConfigChangeNotifyRequest sent (ok) or failed.
//   - gauges: connections (set-up gRPC connections), closing (closed,
//     within their grace), subscribers (service subscriptions),
//     config_listeners, instances (ephemeral records the door holds) and
//     http_instances (those registered over the 1.x API), http_config_listeners
//     (1.x config long polls held); http_listeners_refused{route,reason}:
//     long polls refused at the limit.
type stats struct {
	mu      sync.Mutex
	counts  map[statKey]uint64
	flushed map[statKey]uint64
}

type statKey struct {
	series, k1, v1, k2, v2 string
}

func (st *stats) add(k statKey) {
	st.mu.Lock()
	if st.counts == nil {
		st.counts, st.flushed = map[statKey]uint64{}, map[statKey]uint64{}
	}
	st.counts[k]++
	st.mu.Unlock()
}

// countRequest counts one gRPC request of type typ answered with resp.
func (s *Server) countRequest(typ string, resp *nacoswire.Payload) {
	if _, known := handlers[typ]; !known && typ != nacoswire.TypeServerCheck && typ != nacoswire.TypeHealthCheck {
		typ = "other"
	}
	code := "0"
	if resp.Type == nacoswire.TypeErrorResponse {
		var r nacoswire.Response
		json.Unmarshal(resp.Body, &r)
		code = strconv.Itoa(r.ErrorCode)
	}
	s.stats.add(statKey{"requests", "type", typ, "code", code})
}

// countPush counts one push of type typ.
func (s *Server) countPush(typ string, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	s.stats.add(statKey{"pushes", "type", typ, "result", result})
}

// counted wraps a 1.x API handler to count its answers by route.
func (s *Server) counted(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h(sw, r)
		s.stats.add(statKey{"http_requests", "route", route, "status", strconv.Itoa(sw.status)})
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (s *Server) metricsLoop() {
	doorkit.Every(s.ctx, flushEvery, func(time.Time) { s.flushMetrics() })
}

// Gauges are what the door holds now (the series list above).
type Gauges struct {
	Connections, Closing, Subscribers, ConfigListeners, Instances, HTTPInstances int
	// HTTPListeners are the 1.x config long polls held (listener.go).
	HTTPListeners int
}

// Gauges counts what the door holds now.
func (s *Server) Gauges() Gauges {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := Gauges{Instances: len(s.holders), HTTPInstances: len(s.beats), HTTPListeners: len(s.polls)}
	for _, c := range s.clients {
		if c.gone {
			g.Closing++
			continue
		}
		g.Connections++
		g.Subscribers += len(c.subs)
		g.ConfigListeners += len(c.listens)
	}
	return g
}

// flushMetrics hands the counts since the last flush and the gauges to
// go-metrics.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	st := &s.stats
	st.mu.Lock()
	for k, n := range st.counts {
		if d := n - st.flushed[k]; d > 0 {
			m.IncrCounterWithLabels([]string{"nacos", k.series}, float32(d),
				[]metrics.Label{{Name: k.k1, Value: k.v1}, {Name: k.k2, Value: k.v2}})
			st.flushed[k] = n
		}
	}
	st.mu.Unlock()
	g := s.Gauges()
	for name, v := range map[string]int{"connections": g.Connections, "closing": g.Closing, "subscribers": g.Subscribers,
		"config_listeners": g.ConfigListeners, "instances": g.Instances, "http_instances": g.HTTPInstances,
		"http_config_listeners": g.HTTPListeners} {
		m.SetGauge([]string{"nacos", name}, float32(v))
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
