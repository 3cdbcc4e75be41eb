package zkwire

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// update rewrites testdata/golden from the encoder. The files in the tree
// were written from the spec's §6 hex, not by this flag: use it only to add
// a new frame, and check the new file against a real client.
var update = flag.Bool("update", false, "rewrite testdata/golden from the encoder")

// Values of the spec's §6 examples.
const (
	sid1 = 0x01000193ab5c0001
	sid2 = 0x01000193ab5c0002
	z0   = 0x00062a99ba0c6000
	z1   = 0x00062a99ba58ab41
	t0   = 1735689600000
	t1   = t0 + 5000
	leaf = "/dubbo/demo.Api/providers/dubbo%3A%2F%2F10.0.0.5%3A20880%2Fdemo.Api%3Fside%3Dprovider"
)

var (
	pw16  = []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	zero  = make([]byte, 16)
	world = []ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
)

// golden is one worked frame: an optional header and a record.
type golden struct {
	name   string
	req    *RequestHeader
	rep    *ReplyHeader
	body   Record
	decode func() Record // a zero record of the body's type, for the round trip
}

func goldens() []golden {
	return []golden{
		{name: "a1_connect_request_readonly", body: &ConnectRequest{TimeOut: 60000, Passwd: zero, HasReadOnly: true},
			decode: func() Record { return &ConnectRequest{} }},
		{name: "a2_connect_response_readonly", body: &ConnectResponse{TimeOut: 40000, SessionID: sid1, Passwd: pw16, HasReadOnly: true},
			decode: func() Record { return &ConnectResponse{} }},
		{name: "a3_connect_request_goclient", body: &ConnectRequest{TimeOut: 5000, Passwd: zero},
			decode: func() Record { return &ConnectRequest{} }},
		{name: "a4_connect_response", body: &ConnectResponse{TimeOut: 5000, SessionID: sid2, Passwd: pw16},
			decode: func() Record { return &ConnectResponse{} }},
		{name: "a5_connect_response_expired", body: &ConnectResponse{Passwd: zero, HasReadOnly: true},
			decode: func() Record { return &ConnectResponse{} }},
		{name: "b1_create2_ephemeral", req: &RequestHeader{Xid: 5, Type: OpCreate2},
			body:   &CreateRequest{Path: leaf, Data: []byte("10.0.0.5"), ACL: world, Flags: FlagEphemeral},
			decode: func() Record { return &CreateRequest{} }},
		{name: "b2_create2_reply", rep: &ReplyHeader{Xid: 5, Zxid: z1},
			body: &Create2Response{Path: leaf, Stat: Stat{Czxid: z1, Mzxid: z1, Ctime: t1, Mtime: t1,
				EphemeralOwner: sid1, DataLength: 8, Pzxid: z1}},
			decode: func() Record { return &Create2Response{} }},
		{name: "b3_create_goclient", req: &RequestHeader{Xid: 3, Type: OpCreate},
			body:   &CreateRequest{Path: leaf, Data: []byte{}, ACL: world, Flags: FlagEphemeral},
			decode: func() Record { return &CreateRequest{} }},
		{name: "b4_create_reply", rep: &ReplyHeader{Xid: 3, Zxid: z1}, body: &PathOnly{Path: leaf},
			decode: func() Record { return &PathOnly{} }},
		{name: "b5_nodeexists_reply", rep: &ReplyHeader{Xid: 3, Zxid: z1, Err: ErrNodeExists}},
		{name: "c1_getchildren2_watch", req: &RequestHeader{Xid: 6, Type: OpGetChildren2},
			body: &PathWatch{Path: "/dubbo/demo.Api/providers", Watch: true}, decode: func() Record { return &PathWatch{} }},
		{name: "c2_getchildren2_reply", rep: &ReplyHeader{Xid: 6, Zxid: z1},
			body: &ChildrenResponse{WithStat: true, Children: []string{strings.TrimPrefix(leaf, "/dubbo/demo.Api/providers/")},
				Stat: Stat{Czxid: z0, Mzxid: z0, Ctime: t0, Mtime: t0, Cversion: 1, DataLength: 8, NumChildren: 1, Pzxid: z1}},
			decode: func() Record { return &ChildrenResponse{WithStat: true} }},
		{name: "d1_notification", rep: &ReplyHeader{Xid: XidNotification, Zxid: -1},
			body:   &WatcherEvent{Type: EventNodeChildrenChanged, State: StateSyncConnected, Path: "/dubbo/demo.Api/providers"},
			decode: func() Record { return &WatcherEvent{} }},
		{name: "e1_ping", req: &RequestHeader{Xid: XidPing, Type: OpPing}},
		{name: "e2_ping_reply", rep: &ReplyHeader{Xid: XidPing, Zxid: z1}},
		{name: "f1_addwatch_recursive", req: &RequestHeader{Xid: 7, Type: OpAddWatch},
			body: &PathMode{Path: "/services/demo-provider", Mode: AddWatchPersistentRecursive}, decode: func() Record { return &PathMode{} }},
		{name: "f2_addwatch_reply", rep: &ReplyHeader{Xid: 7, Zxid: z1}, body: &ErrorResponse{},
			decode: func() Record { return &ErrorResponse{} }},
		{name: "f3_exists_watch", req: &RequestHeader{Xid: 8, Type: OpExists},
			body: &PathWatch{Path: "/dubbo/config/dubbo/demo-consumer.configurators", Watch: true}, decode: func() Record { return &PathWatch{} }},
		{name: "f4_nonode_reply", rep: &ReplyHeader{Xid: 8, Zxid: z1, Err: ErrNoNode}},
		{name: "f5_close_session", req: &RequestHeader{Xid: 9, Type: OpCloseSession}},
		{name: "f6_close_session_reply", rep: &ReplyHeader{Xid: 9, Zxid: z1}},
	}
}

func (g golden) encode() []byte {
	return AppendPacket(nil, func(e *Encoder) {
		if g.req != nil {
			g.req.Encode(e)
		}
		if g.rep != nil {
			g.rep.Encode(e)
		}
		if g.body != nil {
			g.body.Encode(e)
		}
	})
}

// TestGoldenFrames encodes every worked frame of the spec's §6 and compares
// it with the spec's bytes, then decodes those bytes back into the values.
func TestGoldenFrames(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", g.name+".hex")
			got := g.encode()
			if *update {
				if err := os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoded\n%x\nwant\n%x", got, want)
			}
			body, err := ReadPacket(bytes.NewReader(want), MaxPacket)
			if err != nil {
				t.Fatal(err)
			}
			d := NewDecoder(body)
			if g.req != nil {
				var h RequestHeader
				h.Decode(d)
				if h != *g.req {
					t.Fatalf("request header %+v, want %+v", h, *g.req)
				}
			}
			if g.rep != nil {
				var h ReplyHeader
				h.Decode(d)
				if h != *g.rep {
					t.Fatalf("reply header %+v, want %+v", h, *g.rep)
				}
			}
			if g.decode != nil {
				r := g.decode()
				r.Decode(d)
				if !reflect.DeepEqual(r, g.body) {
					t.Fatalf("decoded %+v, want %+v", r, g.body)
				}
			}
			if d.Err() != nil || d.Remaining() != 0 {
				t.Fatalf("decode left err %v, %d bytes", d.Err(), d.Remaining())
			}
		})
	}
}
