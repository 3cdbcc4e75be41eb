package httpapi

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The HTTP API listens on loopback, where every web page open in a browser
// on the host can reach it too. Three checks keep pages out, in front of
// every path (/v1/, /metrics, and anything served beside them):
//
//  1. DNS rebinding: a page on attacker.example whose name is re-pointed at
//     127.0.0.1 reaches us as same-origin, but its requests still carry
//     Host: attacker.example. A Host must be an IP address (loopback, the
//     one the request came in on, or --http's), `localhost`, or a name the
//     operator allows (--http-allow-host). An IP literal cannot be rebound.
//  2. Cross-site requests: a browser marks them with Sec-Fetch-Site
//     (cross-site, same-site) and, for anything but a plain GET, with an
//     Origin. Either naming another origin than the Host asked for is
//     refused. Tools (curl, the CLI, the client package) send neither.
//  3. "Simple" requests: a page may POST text/plain or a form to any
//     address without asking first. Every POST and every body must be
//     Content-Type: application/json, which no page can send cross-origin
//     without a CORS preflight, and the agent answers no preflight.
//
// A same-origin page (the UI served by the agent itself) passes all three.

// hostAllowed reports whether a request's Host may reach the API.
func (s *Server) hostAllowed(r *http.Request) bool {
	if r.Host == "" {
		return true // HTTP/1.0 without Host: not a browser
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		host = h
	}
	host = strings.Trim(strings.TrimSuffix(strings.ToLower(host), "."), "[]")
	httpHost, _, _ := net.SplitHostPort(s.cfg.Addr)
	if host == "localhost" || strings.EqualFold(host, httpHost) {
		return true
	}
	for _, h := range s.cfg.AllowHosts {
		if strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			return true
		}
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return false
	case ip.IsLoopback() || ip.Equal(net.ParseIP(httpHost)):
		return true
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return local != nil && local.IP.Equal(ip)
}

// crossSite reports why a request comes from a page of another origin, or
// "" when it does not.
func crossSite(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none": // none: typed into the address bar
	default:
		return "the browser marks it Sec-Fetch-Site: " + site
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return "its Origin " + origin + " is not this agent's"
	}
	return ""
}

// jsonBody reports whether a write says its body is JSON. A DELETE without
// a body needs no type: browsers never send one cross-origin unasked.
func jsonBody(r *http.Request) bool {
	if r.Method == http.MethodDelete && r.ContentLength == 0 && r.Header.Get("Content-Type") == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// guard applies the checks above to every request before next sees it.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		switch {
		case !s.hostAllowed(r):
			err = errorf(http.StatusForbidden, "Host %q is not allowed: use a loopback address, localhost or the --http address, "+
				"or start the agent with --http-allow-host NAME (this guards against DNS rebinding)", r.Host)
		case crossSite(r) != "":
			err = errorf(http.StatusForbidden, "cross-site request refused: %s (only the agent's own pages and non-browser clients may call it)", crossSite(r))
		case r.Method != http.MethodGet && r.Method != http.MethodHead && !jsonBody(r):
			err = errorf(http.StatusUnsupportedMediaType, "%s %s needs Content-Type: application/json, got %q",
				r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		// An answer must be taken within writeTimeout, after the longest
		// wait of a blocking query (conns.go).
		var wait time.Duration
		if r.URL.Query().Has("index") {
			wait = maxWait
		}
		extendWrite(w, wait)
		if err != nil {
			s.m().IncrCounter([]string{"http", "refused"}, 1)
			writeError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
