package zookeeper

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// The reply carries the readOnly byte iff the request did (spec §1.4).
func TestHandshakeEchoesReadOnly(t *testing.T) {
	s, _ := startServer(t)
	for _, ro := range []bool{false, true} {
		r := dialRaw(t, s)
		resp := r.handshake(ro)
		if resp.HasReadOnly != ro || resp.SessionID == 0 || resp.TimeOut != 5000 || len(resp.Passwd) != 16 {
			t.Fatalf("readOnly %v: %+v", ro, resp)
		}
	}
}

// An unknown session gets the expired form (timeout 0, id 0) and the
// socket closes.
func TestUnknownSessionExpired(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, SessionID: 42, Passwd: make([]byte, 16), HasReadOnly: true}).Encode(e)
	})
	var resp zkwire.ConnectResponse
	if err := zkwire.Unmarshal(r.recv(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.TimeOut != 0 || resp.SessionID != 0 || !resp.HasReadOnly {
		t.Fatalf("expired form %+v", resp)
	}
	if _, err := r.br.ReadByte(); err != io.EOF {
		t.Fatalf("socket still open after the expired form: %v", err)
	}
}

// Unknown opcodes answer UNIMPLEMENTED and the connection keeps working;
// malformed records answer MARSHALLINGERROR.
func TestUnknownOpcodeAndMalformedRecord(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	for _, op := range []int32{zkwire.OpMultiRead, zkwire.OpCreateTTL, 4242} {
		if h, _, _ := r.call(1, op, nil); h.Err != zkwire.ErrUnimplemented {
			t.Fatalf("op %d: err %d", op, h.Err)
		}
	}
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: 2, Type: zkwire.OpGetData}).Encode(e)
		e.Int(1 << 20)
	})
	d := zkwire.NewDecoder(r.recv())
	var h zkwire.ReplyHeader
	h.Decode(d)
	if h.Xid != 2 || h.Err != zkwire.ErrMarshalling {
		t.Fatalf("malformed getData: %+v", h)
	}
	if h, _, _ := r.call(zkwire.XidPing, zkwire.OpPing, nil); h.Err != 0 || h.Zxid <= 0 {
		t.Fatalf("ping after errors: %+v", h)
	}
}

// A frame announcing more than jute.maxbuffer closes the connection
// before anything is allocated for it.
func TestOversizedFrameCloses(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], zkwire.MaxPacket+1)
	r.nc.Write(b[:])
	if _, err := r.br.ReadByte(); err != io.EOF {
		t.Fatalf("connection still open: %v", err)
	}
}

// Pipelined requests are answered in request order.
func TestPipelinedRepliesInOrder(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	var frames []byte
	for i := int32(1); i <= 100; i++ {
		frames = zkwire.AppendPacket(frames, func(e *zkwire.Encoder) {
			switch i % 3 {
			case 0:
				(&zkwire.RequestHeader{Xid: i, Type: zkwire.OpExists}).Encode(e)
				(&zkwire.PathWatch{Path: "/zookeeper"}).Encode(e)
			case 1:
				(&zkwire.RequestHeader{Xid: i, Type: zkwire.OpCreate}).Encode(e)
				(&zkwire.CreateRequest{Path: "/p" + string(rune('a'+i%26)), ACL: openACL}).Encode(e)
			default:
				(&zkwire.RequestHeader{Xid: i, Type: zkwire.OpGetChildren}).Encode(e)
				(&zkwire.PathWatch{Path: "/"}).Encode(e)
			}
		})
	}
	r.nc.Write(frames)
	for i := int32(1); i <= 100; i++ {
		d := zkwire.NewDecoder(r.recv())
		var h zkwire.ReplyHeader
		h.Decode(d)
		if h.Xid != i {
			t.Fatalf("reply %d has xid %d", i, h.Xid)
		}
	}
}

// addWatch's reply has the 4-byte ErrorResponse body Java insists on.
func TestAddWatchReplyBody(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	_, d, _ := r.call(7, zkwire.OpAddWatch, &zkwire.PathMode{Path: "/services/demo", Mode: zkwire.AddWatchPersistentRecursive})
	if d.Remaining() != 4 {
		t.Fatalf("addWatch body of %d bytes, want 4", d.Remaining())
	}
}

func TestFourLetterWords(t *testing.T) {
	s, _ := startServer(t)
	for word, want := range map[string]string{"ruok": "imok", "srvr": "Mode: standalone", "mntr": "zk_znode_count\t4"} {
		r := dialRaw(t, s)
		r.nc.Write([]byte(word))
		b, err := io.ReadAll(r.br)
		if err != nil || !strings.Contains(string(b), want) {
			t.Fatalf("%s: %q %v, want %q", word, b, err, want)
		}
	}
}

// A client is not answered before the agent's first sync (bounded).
func TestHandshakeWaitsForReady(t *testing.T) {
	s, reg := startServer(t)
	reg.NotYet.Store(true)
	r := dialRaw(t, s)
	r.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16)}).Encode(e)
	})
	r.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := r.br.Peek(1); err == nil {
		t.Fatal("answered before the agent was ready")
	}
	reg.NotYet.Store(false)
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var resp zkwire.ConnectResponse
	if err := zkwire.Unmarshal(r.recv(), &resp); err != nil || resp.SessionID == 0 {
		t.Fatalf("after ready: %+v %v", resp, err)
	}
}

// create2 and createContainer (Curator 5) answer Create2Response with the
// new node's Stat; containers are persistent nodes here.
func TestCreate2AndContainer(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	resp := r.handshake(true)
	_, d, _ := r.call(1, zkwire.OpCreateContainer, &zkwire.CreateRequest{Path: "/services", ACL: openACL, Flags: zkwire.FlagContainer})
	var c2 zkwire.Create2Response
	c2.Decode(d)
	if d.Err() != nil || c2.Path != "/services" || c2.Stat.EphemeralOwner != 0 || c2.Stat.Czxid == 0 {
		t.Fatalf("createContainer: %+v %v", c2, d.Err())
	}
	_, d, _ = r.call(2, zkwire.OpCreate2, &zkwire.CreateRequest{Path: "/services/x", Data: []byte("10.0.0.5"), ACL: openACL, Flags: zkwire.FlagEphemeral})
	c2 = zkwire.Create2Response{}
	c2.Decode(d)
	if d.Err() != nil || c2.Stat.EphemeralOwner != resp.SessionID || c2.Stat.DataLength != 8 || c2.Stat.Version != 0 || c2.Stat.Czxid <= 0 {
		t.Fatalf("create2: %+v %v", c2, d.Err())
	}
	// ZooKeeper's order: a path without '/' (a kazoo-style empty path,
	// -1) is BADARGUMENTS, then a missing parent as spelled is NONODE, then
	// an invalid path under an existing parent is BADARGUMENTS.
	for p, want := range map[string]int32{"": zkwire.ErrBadArguments, "rel": zkwire.ErrBadArguments,
		"/a/": zkwire.ErrNoNode, "/a//b": zkwire.ErrNoNode, "/a/./b": zkwire.ErrNoNode,
		"/services/": zkwire.ErrBadArguments, "/services/.": zkwire.ErrBadArguments} {
		if h, _, _ := r.call(3, zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: openACL}); h.Err != want {
			t.Fatalf("create %q: err %d, want %d", p, h.Err, want)
		}
	}
	if h, _, _ := r.call(4, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/noacl"}); h.Err != zkwire.ErrInvalidACL {
		t.Fatalf("create without ACL: err %d", h.Err)
	}
	if h, _, _ := r.call(5, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/seq", ACL: openACL, Flags: zkwire.FlagEphemeralSequential}); h.Err != zkwire.ErrUnimplemented {
		t.Fatalf("sequential create: err %d", h.Err)
	}
	// closeSession removes the session's ephemeral node before replying.
	r.call(6, zkwire.OpCloseSession, nil)
	r2 := dialRaw(t, s)
	r2.handshake(false)
	if h, _, _ := r2.call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/services/x"}); h.Err != zkwire.ErrNoNode {
		t.Fatalf("ephemeral after closeSession: err %d", h.Err)
	}
}

// A client that pipelines far more than it reads is slowed down, not
// disconnected: every reply arrives, in order.
func TestPipelinedBigRepliesBackpressure(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	create(t, r, 1, "/big", 0)
	long := strings.Repeat("x", 900)
	for i := 0; i < 100; i++ {
		create(t, r, int32(2+i), fmt.Sprintf("/big/%s%03d", long, i), 0)
	}
	const n = 300 // ~27 MB of replies, beyond maxPending
	var frames []byte
	for i := int32(1); i <= n; i++ {
		frames = zkwire.AppendPacket(frames, func(e *zkwire.Encoder) {
			(&zkwire.RequestHeader{Xid: i, Type: zkwire.OpGetChildren}).Encode(e)
			(&zkwire.PathWatch{Path: "/big"}).Encode(e)
		})
	}
	if _, err := r.nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	r.nc.SetDeadline(time.Now().Add(60 * time.Second))
	for i := int32(1); i <= n; i++ {
		d := zkwire.NewDecoder(r.recv())
		var h zkwire.ReplyHeader
		h.Decode(d)
		var ch zkwire.ChildrenResponse
		ch.Decode(d)
		if h.Xid != i || len(ch.Children) != 100 {
			t.Fatalf("reply %d: xid %d, %d children", i, h.Xid, len(ch.Children))
		}
	}
}
