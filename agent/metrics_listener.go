package agent

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
)

// metricsListener is the --metrics listener and its server.
type metricsListener struct {
	ln  net.Listener
	srv *http.Server
}

// startMetricsListener serves --metrics HOST:PORT: a read-only listener
// with GET /metrics and GET /v1/health and nothing else, so Prometheus on
// another host (and a Kubernetes probe) can reach them without the HTTP
// API, whose writes stay on loopback or behind a token. Off when empty.
func (a *Agent) startMetricsListener() error {
	if a.cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := binder{spec: doorkit.Spec{Required: true}, listen: a.cfg.Listen, log: a.log}.Bind("metrics", "metrics", a.cfg.MetricsAddr, "")
	if err != nil {
		return err
	}
	metrics := a.metricsHandler()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the metrics listener (--metrics) is read-only: GET /metrics and GET /v1/health", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/metrics":
			metrics.ServeHTTP(w, r)
		case "/v1/health":
			a.serveHealth(w, r)
		default:
			http.Error(w, "the metrics listener (--metrics) serves only GET /metrics and GET /v1/health", http.StatusNotFound)
		}
	})
	a.metricsL.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10}
	a.wg.Go(func() {
		if err := a.metricsL.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics listener stopped", "err", err)
		}
	})
	a.log.Info("listening", "listener", "metrics", "addr", ln.Addr().String())
	a.metricsL.ln = ln
	return nil
}

// MetricsAddr is the address of the --metrics listener ("" when off).
func (a *Agent) MetricsAddr() string {
	if a.metricsL.ln == nil {
		return ""
	}
	return a.metricsL.ln.Addr().String()
}

func (a *Agent) stopMetricsListener() {
	if a.metricsL.srv != nil {
		_ = a.metricsL.srv.Close()
	}
}

// serveHealth answers as GET /v1/health on the HTTP API does.
func (a *Agent) serveHealth(w http.ResponseWriter, r *http.Request) {
	status := "ok"
	if a.leaving.Load() {
		status = "leaving"
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"node": a.cfg.NodeName, "status": status,
		"members": a.gossip.AliveMembers(), "ready": a.Ready()})
}
