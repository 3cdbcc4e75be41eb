package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/namecast/namecast/agent/conns"
)

// Connections. Every blocking query holds a connection for up to its wait
// (10 minutes at most), and nothing else bounds how many a client opens,
// so the door lets in at most Config.MaxConns at once (package conns):
// past it a connection gets a 503 and is closed before its request is
// read; one that ends makes room at once. Every client on the agent's host
// shares 127.0.0.1, so the bound is in all, not per client IP.
//
// What one connection can hold is bounded too: its request headers
// (maxHeaderBytes) must arrive within readTimeout, as must its body (at
// most maxBodyBytes); an idle one closes after idleConnection; and an
// answer must be taken within writeTimeout (after a blocking query's wait).
const (
	// DefaultMaxConns is Config.MaxConns' default: far above what
	// tools, pages and watching clients open, far below the file
	// descriptors a flood would take.
	DefaultMaxConns = 10000
	maxHeaderBytes  = 64 << 10
	writeTimeout    = 30 * time.Second
)

// refusedAnswer is what a connection past MaxConns gets, best effort: its
// request is never read.
var refusedAnswer = []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" +
	`{"error":"too many connections to this agent's HTTP API; try again later"}` + "\n")

// refused counts a connection refused for MaxConns, answers it and says
// so, now and again: the first, then at most one line per 10 s. It runs
// on the accepting goroutine, so its write must not wait: a new
// connection's send buffer takes the answer at once, and a deadline
// guards the rest.
func (s *Server) refused(r conns.Refusal) {
	s.m().IncrCounter([]string{"http", "connections_refused"}, 1)
	r.Conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	r.Conn.Write(refusedAnswer)
	s.refusals.Refused(r)
}

// admit wraps ln so that the server takes only the connections within
// MaxConns.
func (s *Server) admit(ln net.Listener) (net.Listener, error) {
	admitted, err := s.conns.Listener(ln, func(nc net.Conn) net.Conn { return nc })
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	return admitted, nil
}

// extendWrite gives the answer to r writeTimeout after wait more: a
// blocking query writes nothing until its wait ends.
func extendWrite(w http.ResponseWriter, wait time.Duration) {
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + writeTimeout))
}
