package zookeeper

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// One burst of pipelined requests is answered with batched writes: the
// replies keep request order, a listing large enough to be queued by
// reference (out.go) carries the children and Stat of the moment it was
// asked, even when the children change later in the same burst, and the
// notifications a request in the burst causes come right before its reply.
func TestBatchedRepliesOrderAndNotifications(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	create(t, r, 1, "/big", 0)
	long := strings.Repeat("n", 200) // 30 children: past sharedMin
	var names []string
	for i := 0; i < 30; i++ {
		names = append(names, fmt.Sprintf("%s%02d", long, i))
		create(t, r, int32(2+i), "/big/"+names[i], 0)
	}
	create(t, r, 40, "/w", 0)

	type want struct {
		xid      int32
		children []string // for getChildren2 replies
		event    int32    // a notification before this reply, 0 for none
	}
	var frames []byte
	var wants []want
	req := func(xid, op int32, rec zkwire.Record, w want) {
		frames = zkwire.AppendPacket(frames, func(e *zkwire.Encoder) {
			(&zkwire.RequestHeader{Xid: xid, Type: op}).Encode(e)
			rec.Encode(e)
		})
		w.xid = xid
		wants = append(wants, w)
	}
	more := slices.Clone(names)
	more = append(more, long+"zz")
	for i := int32(100); i < 160; i++ {
		switch {
		case i == 101:
			req(i, zkwire.OpGetData, &zkwire.PathWatch{Path: "/w", Watch: true}, want{})
		case i == 102:
			req(i, zkwire.OpGetChildren2, &zkwire.PathWatch{Path: "/big", Watch: true}, want{children: names})
		case i == 120:
			req(i, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/w", Data: []byte("x"), Version: -1},
				want{event: zkwire.EventNodeDataChanged})
		case i == 130:
			req(i, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/big/" + long + "zz", ACL: openACL},
				want{event: zkwire.EventNodeChildrenChanged})
		case i%3 == 0 && i < 130:
			req(i, zkwire.OpGetChildren2, &zkwire.PathWatch{Path: "/big"}, want{children: names})
		case i%3 == 0:
			req(i, zkwire.OpGetChildren2, &zkwire.PathWatch{Path: "/big"}, want{children: more})
		default:
			req(i, zkwire.OpExists, &zkwire.PathWatch{Path: "/w"}, want{})
		}
	}
	if _, err := r.nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	r.nc.SetDeadline(time.Now().Add(30 * time.Second))
	for _, w := range wants {
		d := zkwire.NewDecoder(r.recv())
		var h zkwire.ReplyHeader
		h.Decode(d)
		if w.event != 0 {
			var ev zkwire.WatcherEvent
			ev.Decode(d)
			if h.Xid != zkwire.XidNotification || ev.Type != w.event || ev.State != zkwire.StateSyncConnected {
				t.Fatalf("before reply %d: frame xid %d event %+v, want notification type %d", w.xid, h.Xid, ev, w.event)
			}
			d = zkwire.NewDecoder(r.recv())
			h.Decode(d)
		}
		if h.Xid != w.xid || h.Err != 0 {
			t.Fatalf("got reply xid %d err %d, want xid %d", h.Xid, h.Err, w.xid)
		}
		if w.children == nil {
			continue
		}
		ch := zkwire.ChildrenResponse{WithStat: true}
		ch.Decode(d)
		if d.Err() != nil || d.Remaining() != 0 || !slices.Equal(ch.Children, w.children) ||
			ch.Stat.NumChildren != int32(len(w.children)) || ch.Stat.Cversion != childVersion(w.children) {
			t.Fatalf("reply %d: %d children, stat %+v, %d bytes left, err %v; want %d children",
				w.xid, len(ch.Children), ch.Stat, d.Remaining(), d.Err(), len(w.children))
		}
	}
}

// A notification caused by another connection reaches an idle client on
// its own (no request of the client's to flush it), and replies queued
// behind it keep their order.
func TestNotificationToIdleClient(t *testing.T) {
	s, _ := startServer(t)
	w, c := dialRaw(t, s), dialRaw(t, s)
	w.handshake(false)
	c.handshake(false)
	create(t, c, 1, "/idle", 0)
	if h, _, _ := w.call(1, zkwire.OpGetData, &zkwire.PathWatch{Path: "/idle", Watch: true}); h.Err != 0 {
		t.Fatalf("getData: err %d", h.Err)
	}
	c.call(2, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/idle", Data: []byte("1"), Version: -1})
	d := zkwire.NewDecoder(w.recv())
	var h zkwire.ReplyHeader
	var ev zkwire.WatcherEvent
	h.Decode(d)
	ev.Decode(d)
	if h.Xid != zkwire.XidNotification || ev.Type != zkwire.EventNodeDataChanged || ev.Path != "/idle" {
		t.Fatalf("got xid %d event %+v, want NodeDataChanged /idle", h.Xid, ev)
	}
	if h, _, evs := w.call(2, zkwire.OpExists, &zkwire.PathWatch{Path: "/idle"}); h.Err != 0 || len(evs) != 0 {
		t.Fatalf("exists after the event: err %d, events %v", h.Err, evs)
	}
}
