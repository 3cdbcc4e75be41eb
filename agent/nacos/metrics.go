package nacos

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

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
//
// The counters are counted in the door's Meter (Server.stats), flushed
// every doorkit.FlushEvery with the gauges.

// label is a metrics label.
func label(name, value string) metrics.Label { return metrics.Label{Name: name, Value: value} }

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
	s.stats.Add(1, "requests", label("type", typ), label("code", code))
}

// countPush counts one push of type typ.
func (s *Server) countPush(typ string, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	s.stats.Add(1, "pushes", label("type", typ), label("result", result))
}

// counted wraps a 1.x API handler to count its answers by route.
func (s *Server) counted(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h(sw, r)
		s.stats.Add(1, "http_requests", label("route", route), label("status", strconv.Itoa(sw.status)))
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
	doorkit.Every(s.ctx, doorkit.FlushEvery, func(time.Time) { s.flushMetrics() })
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

// flushMetrics hands the counts to go-metrics and sets the gauges.
func (s *Server) flushMetrics() {
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	s.stats.Flush(m)
	g := s.Gauges()
	for name, v := range map[string]int{"connections": g.Connections, "closing": g.Closing, "subscribers": g.Subscribers,
		"config_listeners": g.ConfigListeners, "instances": g.Instances, "http_instances": g.HTTPInstances,
		"http_config_listeners": g.HTTPListeners} {
		m.SetGauge([]string{"nacos", name}, float32(v))
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
