package agent

import (
	"net"
	"net/http"

	"github.com/namecast/namecast/agent/ui"
)

// serveUI adds the web UI and the read-only endpoints it reads (which a
// user can curl as well) to the HTTP API.
func (a *Agent) serveUI(mux *http.ServeMux) {
	mux.Handle(ui.Prefix, ui.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler(ui.Prefix, http.StatusFound))
	mux.Handle("/v1/index", a.endpoint(methods{"GET": a.getIndex}))
	mux.Handle("/v1/agent", a.endpoint(methods{"GET": a.getAgent}))
	mux.Handle("/v1/coordinates", a.endpoint(methods{"GET": a.getCoordinates}))
	mux.Handle("/v1/origins", a.endpoint(methods{"GET": a.getOrigins}))
	mux.Handle("/v1/rules", a.endpoint(methods{"GET": a.getRules}))
	mux.Handle("GET /v1/brokers", a.endpoint(methods{"GET": a.getBrokers}))
	a.log.Info("web UI", "url", a.UIURL())
}

// getIndex answers the table's index, which moves on every change of the
// cluster's records or members. As a blocking query it is "wake me when
// anything changed": the web UI holds one of these per page, then reads
// the views it shows.
func (a *Agent) getIndex(r *http.Request) (any, error) {
	return map[string]uint64{"index": a.table.Index()}, nil
}

// UIURL is the address of the web UI, with a loopback host when the API
// listens on every interface.
func (a *Agent) UIURL() string {
	host, port, err := net.SplitHostPort(a.HTTPAddr())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + ui.Prefix
}
