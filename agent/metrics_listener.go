package agent

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/gossip"
)

// metricsListener is the --metrics listener and its server.
type metricsListener struct {
	ln  net.Listener
	srv *http.Server
}

// start serves --metrics HOST:PORT (addr, bound with listen:
// Config.Listen): a read-only listener with GET /metrics and GET
// /v1/health and nothing else, so Prometheus on another host (and a
// Kubernetes probe) can reach them without the HTTP API, whose writes
// stay on loopback or behind a token. Off when addr is empty. wg owns its
// goroutine.
func (l *metricsListener) start(addr string, listen func(name, addr string) (net.Listener, error), log *slog.Logger,
	wg *sync.WaitGroup, metrics, health http.Handler) error {
	if addr == "" {
		return nil
	}
	ln, err := binder{spec: doorkit.Spec{Required: true}, listen: listen, log: log}.Bind("metrics", "metrics", addr, "")
	if err != nil {
		return err
	}
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
			health.ServeHTTP(w, r)
		default:
			http.Error(w, "the metrics listener (--metrics) serves only GET /metrics and GET /v1/health", http.StatusNotFound)
		}
	})
	l.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10}
	srv := l.srv
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	})
	log.Info("listening", "listener", "metrics", "addr", ln.Addr().String())
	l.ln = ln
	return nil
}

// addr is where the listener listens ("" when off).
func (l *metricsListener) addr() string {
	if l.ln == nil {
		return ""
	}
	return l.ln.Addr().String()
}

func (l *metricsListener) stop() {
	if l.srv != nil {
		_ = l.srv.Close()
	}
}

// healthHandler answers as GET /v1/health on the HTTP API does, for the
// agent named node.
func healthHandler(node string, leaving *atomic.Bool, g *gossip.Gossip, ready func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := "ok"
		if leaving.Load() {
			status = "leaving"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"node": node, "status": status,
			"members": g.AliveMembers(), "ready": ready()})
	})
}
