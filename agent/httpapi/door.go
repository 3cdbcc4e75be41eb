package httpapi

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/namecast/namecast/agent/doorkit"
)

// DefaultAddr is where the API listens by default.
const DefaultAddr = "127.0.0.1:7947"

// HTTPSettings is the HTTP door's block of the agent's configuration.
type HTTPSettings struct {
	// HTTPAddr serves the API. Binding it off loopback exposes writes to
	// the network, so it then requires HTTPToken or HTTPInsecure.
	HTTPAddr     string `json:"http"`
	HTTPToken    string `json:"http_token"`
	HTTPInsecure bool   `json:"http_insecure"`
	// HTTPAllowHosts are host names, beyond localhost and IP addresses of
	// this host, that requests may name in their Host header (a DNS name
	// the agent is reached by). Any other name is refused, so a web page
	// cannot reach the API by rebinding its own name to 127.0.0.1.
	HTTPAllowHosts []string `json:"http_allow_host"`
	// HTTPMaxConns bounds the HTTP API's connections open at once (each
	// blocking query holds one for up to its wait); 0: the default,
	// 10,000; negative: no bound.
	HTTPMaxConns int `json:"http_max_conns"`
}

// Door serves the HTTP API and the web UI. It cannot be turned off: it is
// how peers, the CLI and operators reach the agent, so its address is
// published to peers.
func (s *HTTPSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name:     "http",
		Addr:     &s.HTTPAddr,
		Defaults: func() { s.HTTPAddr = DefaultAddr },
		Validate: s.validate,
		Redact: func(redacted string) {
			if s.HTTPToken != "" {
				s.HTTPToken = redacted
			}
		},
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			ln, err := b.Bind("http", "http", s.HTTPAddr, "")
			return []net.Listener{ln}, err
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			agent, ok := env.Agent.(Agent)
			if !ok {
				return nil, errors.New("httpapi: the agent does not implement httpapi.Agent")
			}
			srv, err := New(Config{Host: env.Host, Agent: agent, Node: env.Node, Addr: s.HTTPAddr, Token: s.HTTPToken,
				AllowHosts: s.HTTPAllowHosts, MaxConns: s.HTTPMaxConns, Logger: env.Logger, Metrics: env.Metrics})
			if err != nil {
				return nil, err
			}
			if err := srv.Serve(lns[0]); err != nil {
				return nil, err
			}
			env.Logger.Info("door listening", "door", "http", "addr", srv.Addr())
			env.Logger.Info("web UI", "url", srv.UIURL())
			return srv, nil
		},
		Required:   true,
		Advertised: true,
	}
}

func (s *HTTPSettings) validate() error {
	host, _, err := doorkit.SplitHostPort(s.HTTPAddr)
	if err != nil {
		return fmt.Errorf("--http %q: %v", s.HTTPAddr, err)
	}
	if s.HTTPMaxConns == 0 {
		s.HTTPMaxConns = DefaultMaxConns
	}
	if !doorkit.IsLoopback(host) && s.HTTPToken == "" && !s.HTTPInsecure {
		return fmt.Errorf("--http %s is reachable from the network: set --http-token for write calls, or --http-insecure to allow anyone to register", s.HTTPAddr)
	}
	for _, h := range s.HTTPAllowHosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			return fmt.Errorf("--http-allow-host %q must be a bare host name, without port or scheme, like namecast.internal", h)
		}
	}
	return nil
}

// Addrs is the address the API listens on (with the real port).
func (s *Server) Addrs() []doorkit.Addr { return []doorkit.Addr{{Name: "http", Addr: s.Addr()}} }
