package zookeeper

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

// startServer runs a Server on a free port over a fresh table.
func startServer(t testing.TB, tune ...func(*Config)) (*Server, *hosttest.Fake) {
	t.Helper()
	reg := hosttest.New(routes.NewTable("local", 1))
	cfg := Config{Host: reg, DeleteHold: 50 * time.Millisecond}
	for _, f := range tune {
		f(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	doortest.Serve(t, s)
	return s, reg
}

// raw is a client speaking frames by hand.
type raw struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, s *Server) *raw {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &raw{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *raw) send(body func(*zkwire.Encoder)) {
	r.t.Helper()
	if _, err := r.nc.Write(zkwire.AppendPacket(nil, body)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *raw) recv() []byte {
	r.t.Helper()
	b, err := zkwire.ReadPacket(r.br, zkwire.MaxPacket)
	if err != nil {
		r.t.Fatalf("reading a frame: %v", err)
	}
	return b
}

// handshake opens a new session, with or without the readOnly byte.
func (r *raw) handshake(readOnly bool) zkwire.ConnectResponse {
	r.t.Helper()
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16), HasReadOnly: readOnly}).Encode(e)
	})
	var resp zkwire.ConnectResponse
	if err := zkwire.Unmarshal(r.recv(), &resp); err != nil {
		r.t.Fatal(err)
	}
	return resp
}

// call sends a request and reads frames until the reply to xid, returning
// its header and body (notifications before it are returned too).
func (r *raw) call(xid, op int32, rec zkwire.Record) (zkwire.ReplyHeader, *zkwire.Decoder, []zkwire.WatcherEvent) {
	r.t.Helper()
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: xid, Type: op}).Encode(e)
		if rec != nil {
			rec.Encode(e)
		}
	})
	var events []zkwire.WatcherEvent
	for {
		d := zkwire.NewDecoder(r.recv())
		var h zkwire.ReplyHeader
		h.Decode(d)
		if h.Xid == zkwire.XidNotification {
			var ev zkwire.WatcherEvent
			ev.Decode(d)
			events = append(events, ev)
			continue
		}
		if h.Xid != xid {
			r.t.Fatalf("reply xid %d, want %d", h.Xid, xid)
		}
		return h, d, events
	}
}

var openACL = []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
