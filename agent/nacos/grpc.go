package nacos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// gRPC over HTTP/2 cleartext with net/http: a gRPC call is a POST to
// /{service}/{method} with content-type application/grpc, its messages are
// length-prefixed in the request and response bodies, and its status goes
// in the grpc-status and grpc-message trailers. Nacos clients dial with
// prior knowledge (no TLS, no upgrade), which net/http serves once
// Protocols allows unencrypted HTTP/2.

const (
	pathRequest  = "/Request/request"
	pathBiStream = "/BiRequestStream/requestBiStream"
)

// gRPC status codes used here (google.golang.org/grpc/codes).
const (
	grpcOK            = 0
	grpcUnimplemented = 12
	grpcUnavailable   = 14
)

type connKey struct{}

// connInfo is one TCP connection: Nacos ties a client's unary requests to
// its bi-stream by the connection they share, as Java's server does with
// the transport's connection id.
type connInfo struct {
	id     string
	remote string
}

var connSeq atomic.Uint64

func (s *Server) newGRPCServer() *http.Server {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:   http.HandlerFunc(s.serveGRPC),
		Protocols: &protos,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			// Java's form: millis_ip_port, plus a sequence so two
			// connections in one millisecond differ.
			host, port, _ := net.SplitHostPort(c.RemoteAddr().String())
			id := fmt.Sprintf("%d_%s_%s_%d", time.Now().UnixMilli(), host, port, connSeq.Add(1))
			return context.WithValue(ctx, connKey{}, &connInfo{id: id, remote: host})
		},
	}
	return srv
}

func (s *Server) serveGRPC(w http.ResponseWriter, r *http.Request) {
	ci, _ := r.Context().Value(connKey{}).(*connInfo)
	if r.ProtoMajor != 2 || ci == nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		http.Error(w, "this is the Nacos gRPC port: it speaks gRPC over HTTP/2 only", http.StatusUnsupportedMediaType)
		return
	}
	w.Header().Set("Content-Type", "application/grpc")
	w.Header().Add("Trailer", "grpc-status")
	w.Header().Add("Trailer", "grpc-message")
	switch r.URL.Path {
	case pathRequest:
		s.unary(w, r, ci)
	case pathBiStream:
		s.biStream(w, r, ci)
	default:
		w.WriteHeader(http.StatusOK)
		setStatus(w, grpcUnimplemented, "unknown method "+r.URL.Path+": the Nacos door serves "+pathRequest+" and "+pathBiStream)
	}
}

func setStatus(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("grpc-status", strconv.Itoa(code))
	if msg != "" {
		w.Header().Set("grpc-message", percentEncode(msg))
	}
}

// percentEncode is grpc-message's encoding: printable ASCII but '%' as is.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '%' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// unary answers one Request/request call. Whatever the client sent, it
// gets a Nacos response payload: an ErrorResponse when the bytes were bad.
func (s *Server) unary(w http.ResponseWriter, r *http.Request, ci *connInfo) {
	var resp *nacoswire.Payload
	msg, err := nacoswire.ReadMessage(r.Body, nacoswire.MaxMessage)
	if err != nil {
		resp = errorPayload(nacoswire.ErrInvalidParam, "", "bad gRPC message: "+err.Error())
	} else if p, err := nacoswire.Unmarshal(msg); err != nil {
		resp = errorPayload(nacoswire.ErrInvalidParam, "", "bad Nacos payload: "+err.Error())
	} else {
		resp = s.dispatch(r.Context(), ci, p)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(nacoswire.AppendMessage(nil, resp.Marshal()))
	setStatus(w, grpcOK, "")
}

// stream is one client's bi-stream: the server's pushes go out on it.
type stream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	wt     time.Duration
	mu     sync.Mutex
	closed bool
	seq    atomic.Int64 // request ids of pushes
}

var errStreamClosed = errors.New("nacos: bi-stream closed")

// send writes one payload and flushes it, or fails within the write
// timeout. The deadline is cleared once written: net/http resets an HTTP/2
// stream when its write deadline passes, written or not, and the stream
// must outlive quiet spells.
func (st *stream) send(p *nacoswire.Payload) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errStreamClosed
	}
	st.rc.SetWriteDeadline(time.Now().Add(st.wt))
	if _, err := st.w.Write(nacoswire.AppendMessage(nil, p.Marshal())); err != nil {
		return err
	}
	if err := st.rc.Flush(); err != nil {
		return err
	}
	return st.rc.SetWriteDeadline(time.Time{})
}

// pushRequest sends a server request (a notification) with a fresh id.
func (st *stream) pushRequest(typ string, setID func(id string), v any) error {
	setID(strconv.FormatInt(st.seq.Add(1), 10))
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.send(&nacoswire.Payload{Type: typ, Body: body})
}

// biStream serves BiRequestStream/requestBiStream: the client's
// ConnectionSetupRequest sets the connection up, its answers to pushes are
// read and dropped, and when the stream ends the client is gone.
func (s *Server) biStream(w http.ResponseWriter, r *http.Request, ci *connInfo) {
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w), wt: s.cfg.WriteTimeout}
	if err := st.rc.Flush(); err != nil {
		return
	}
	var setUp bool
	var why error
	for {
		msg, err := nacoswire.ReadMessage(r.Body, nacoswire.MaxMessage)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				why = err
			}
			break
		}
		p, err := nacoswire.Unmarshal(msg)
		if err != nil {
			st.send(errorPayload(nacoswire.ErrInvalidParam, "", "bad Nacos payload: "+err.Error()))
			why = err
			break
		}
		switch {
		case p.Type == nacoswire.TypeConnectionSetup:
			var req nacoswire.ConnectionSetupRequest
			if err := json.Unmarshal(p.Body, &req); err != nil {
				st.send(errorPayload(nacoswire.ErrInvalidParam, "", "bad ConnectionSetupRequest: "+err.Error()))
				why = err
			} else if !setUp {
				setUp = s.setUp(ci, st, req)
			}
		case strings.HasSuffix(p.Type, "Response"):
			// The client's answer to a push: nothing waits for it.
		default:
			st.send(s.dispatch(r.Context(), ci, p))
		}
		if why != nil {
			break
		}
	}
	st.mu.Lock()
	st.closed = true
	if why != nil {
		setStatus(w, grpcUnavailable, why.Error())
	} else {
		setStatus(w, grpcOK, "")
	}
	st.mu.Unlock()
	if setUp {
		s.streamEnded(ci)
	}
}

func errorPayload(code int, requestID, msg string) *nacoswire.Payload {
	r := nacoswire.Fail(code, msg)
	r.RequestID = requestID
	body, _ := json.Marshal(r)
	return &nacoswire.Payload{Type: nacoswire.TypeErrorResponse, Body: body}
}
