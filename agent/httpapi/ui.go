package httpapi

import (
	"net"
	"net/http"

	"github.com/namecast/namecast/agent/ui"
)

// serveUI adds the web UI and the read-only endpoints it reads (which a
// user can curl as well) to the HTTP API.
func (s *Server) serveUI(mux *http.ServeMux) {
	mux.Handle(ui.Prefix, ui.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler(ui.Prefix, http.StatusFound))
	mux.Handle("/v1/index", s.endpoint(methods{"GET": s.getIndex}))
	mux.Handle("/v1/agent", s.endpoint(methods{"GET": s.getAgent}))
	mux.Handle("/v1/coordinates", s.endpoint(methods{"GET": s.getCoordinates}))
	mux.Handle("/v1/origins", s.endpoint(methods{"GET": s.getOrigins}))
	mux.Handle("/v1/rules", s.endpoint(methods{"GET": s.getRules}))
	mux.Handle("GET /v1/brokers", s.endpoint(methods{"GET": s.getBrokers}))
	mux.Handle("GET /v1/brokers/leases", s.endpoint(methods{"GET": s.getBrokerLeases}))
}

// getIndex answers the table's index, which moves on every change of the
// cluster's records or members. As a blocking query it is "wake me when
// anything changed": the web UI holds one of these per page, then reads
// the views it shows.
func (s *Server) getIndex(r *http.Request) (any, error) {
	return map[string]uint64{"index": s.table.Index()}, nil
}

// UIURL is the address of the web UI, with a loopback host when the API
// listens on every interface.
func (s *Server) UIURL() string {
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + ui.Prefix
}
