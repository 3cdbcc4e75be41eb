package zookeeper

import (
	"errors"
	"time"

	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

func create(t testing.TB, r *raw, xid int32, path string, flags int32) []zkwire.WatcherEvent {
	t.Helper()
	h, _, evs := r.call(xid, zkwire.OpCreate, &zkwire.CreateRequest{Path: path, Data: []byte("d"), ACL: openACL, Flags: flags})
	if h.Err != 0 {
		t.Fatalf("create %s: err %d", path, h.Err)
	}
	return evs
}

// Persistent watches see data and child events of their path and stay
// armed; recursive ones see created, deleted and data events of the path
// and everything below, never child events (spec §3.2, §3.4).
func TestPersistentAndRecursiveWatches(t *testing.T) {
	s, _ := startServer(t)
	w, c := dialRaw(t, s), dialRaw(t, s)
	w.handshake(false)
	c.handshake(false)
	w.call(1, zkwire.OpAddWatch, &zkwire.PathMode{Path: "/svc", Mode: zkwire.AddWatchPersistent})
	w.call(2, zkwire.OpAddWatch, &zkwire.PathMode{Path: "/apps", Mode: zkwire.AddWatchPersistentRecursive})

	create(t, c, 1, "/svc", 0)
	create(t, c, 2, "/svc/a", 0)
	create(t, c, 3, "/svc/b", 0)
	create(t, c, 4, "/apps", 0)
	create(t, c, 5, "/apps/demo", 0)
	create(t, c, 6, "/apps/demo/1", zkwire.FlagEphemeral)
	c.call(7, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/apps/demo/1", Data: []byte("x"), Version: -1})
	c.call(8, zkwire.OpDelete, &zkwire.PathVersion{Path: "/apps/demo/1", Version: -1})

	// A ping flushes everything queued before its reply.
	_, _, evs := w.call(-2, zkwire.OpPing, nil)
	want := []zkwire.WatcherEvent{
		{Type: zkwire.EventNodeCreated, Path: "/svc"},
		{Type: zkwire.EventNodeChildrenChanged, Path: "/svc"},
		{Type: zkwire.EventNodeChildrenChanged, Path: "/svc"},
		{Type: zkwire.EventNodeCreated, Path: "/apps"},
		{Type: zkwire.EventNodeCreated, Path: "/apps/demo"},
		{Type: zkwire.EventNodeCreated, Path: "/apps/demo/1"},
		{Type: zkwire.EventNodeDataChanged, Path: "/apps/demo/1"},
		{Type: zkwire.EventNodeDeleted, Path: "/apps/demo/1"},
	}
	if len(evs) != len(want) {
		t.Fatalf("events %+v, want %+v", evs, want)
	}
	for i := range want {
		if evs[i].Type != want[i].Type || evs[i].Path != want[i].Path || evs[i].State != zkwire.StateSyncConnected {
			t.Fatalf("event %d: %+v, want %+v (all: %+v)", i, evs[i], want[i], evs)
		}
	}

	// checkWatches finds them, removeWatches removes them, then NOWATCHER.
	if h, _, _ := w.call(3, zkwire.OpCheckWatches, &zkwire.PathMode{Path: "/apps", Mode: zkwire.WatcherPersistentRecursive}); h.Err != 0 {
		t.Fatalf("checkWatches: %d", h.Err)
	}
	if h, _, _ := w.call(4, zkwire.OpRemoveWatches, &zkwire.PathMode{Path: "/apps", Mode: zkwire.WatcherAny}); h.Err != 0 {
		t.Fatalf("removeWatches: %d", h.Err)
	}
	if h, _, _ := w.call(5, zkwire.OpCheckWatches, &zkwire.PathMode{Path: "/apps", Mode: zkwire.WatcherAny}); h.Err != zkwire.ErrNoWatcher {
		t.Fatalf("checkWatches after removal: %d", h.Err)
	}
	create(t, c, 9, "/apps/demo/2", 0)
	if _, _, evs := w.call(-2, zkwire.OpPing, nil); len(evs) != 0 {
		t.Fatalf("events after removeWatches: %+v", evs)
	}
}

// A one-shot watch fires once; a second watch on the same path from the
// same connection does not double the event.
func TestOneShotWatchFiresOnce(t *testing.T) {
	s, _ := startServer(t)
	w, c := dialRaw(t, s), dialRaw(t, s)
	w.handshake(false)
	c.handshake(false)
	create(t, c, 1, "/n", 0)
	w.call(1, zkwire.OpGetData, &zkwire.PathWatch{Path: "/n", Watch: true})
	w.call(2, zkwire.OpExists, &zkwire.PathWatch{Path: "/n", Watch: true})
	c.call(2, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/n", Data: []byte("1"), Version: -1})
	c.call(3, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/n", Data: []byte("2"), Version: -1})
	_, _, evs := w.call(-2, zkwire.OpPing, nil)
	if len(evs) != 1 || evs[0].Type != zkwire.EventNodeDataChanged {
		t.Fatalf("events %+v, want one NodeDataChanged", evs)
	}
}

// setWatches: a relativeZxid from another agent or run (above ours) makes
// every listed watch fire as changed, never silently re-arm.
func TestSetWatchesForeignZxid(t *testing.T) {
	s, _ := startServer(t)
	w, c := dialRaw(t, s), dialRaw(t, s)
	w.handshake(false)
	c.handshake(false)
	create(t, c, 1, "/a", 0)
	_, _, evs := w.call(1, zkwire.OpSetWatches, &zkwire.SetWatches{RelativeZxid: 1 << 62,
		Data: []string{"/a", "/gone"}, Exist: []string{"/a", "/later"}, Child: []string{"/a"}})
	got := map[zkwire.WatcherEvent]bool{}
	for _, e := range evs {
		got[zkwire.WatcherEvent{Type: e.Type, Path: e.Path}] = true
	}
	_, _, more := w.call(-2, zkwire.OpPing, nil)
	for _, e := range more {
		got[zkwire.WatcherEvent{Type: e.Type, Path: e.Path}] = true
	}
	for _, want := range []zkwire.WatcherEvent{
		{Type: zkwire.EventNodeDataChanged, Path: "/a"}, {Type: zkwire.EventNodeDeleted, Path: "/gone"},
		{Type: zkwire.EventNodeCreated, Path: "/a"}, {Type: zkwire.EventNodeChildrenChanged, Path: "/a"},
	} {
		if !got[want] {
			t.Fatalf("missing %+v in %+v", want, got)
		}
	}
	// The exist watch on a missing node stays armed and fires on create.
	create(t, c, 2, "/later", 0)
	if _, _, evs := w.call(-2, zkwire.OpPing, nil); len(evs) != 1 || evs[0].Type != zkwire.EventNodeCreated {
		t.Fatalf("after create: %+v", evs)
	}
}

// Watches beyond MaxWatches are refused with an error reply and a log
// line; sessions beyond MaxSessions are not opened.
func TestLimits(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxWatches = 2; c.MaxSessions = 1 })
	w := dialRaw(t, s)
	w.handshake(false)
	for i, p := range []string{"/a", "/b", "/c"} {
		h, _, _ := w.call(int32(i+1), zkwire.OpExists, &zkwire.PathWatch{Path: p, Watch: true})
		if want := map[bool]int32{true: zkwire.ErrNoNode, false: zkwire.ErrSystem}[i < 2]; h.Err != want {
			t.Fatalf("watch %d: err %d, want %d", i, h.Err, want)
		}
	}
	second := dialRaw(t, s)
	second.send(func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16)}).Encode(e)
	})
	if _, err := zkwire.ReadPacket(second.br, zkwire.MaxPacket); err == nil {
		t.Fatal("a session beyond MaxSessions was opened")
	}
}

// A delete followed by a re-create of the same ephemeral path within
// DeleteHold never reaches the table as a delete: other agents see no gap.
func TestDeleteHoldCoalescesRecreate(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.DeleteHold = 10 * 1e9 })
	c := dialRaw(t, s)
	c.handshake(false)
	create(t, c, 1, "/services", 0)
	create(t, c, 2, "/services/a:1", zkwire.FlagEphemeral)
	seq := localSeq(reg.Routes)
	c.call(3, zkwire.OpDelete, &zkwire.PathVersion{Path: "/services/a:1", Version: -1})
	if h, _, _ := c.call(4, zkwire.OpExists, &zkwire.PathWatch{Path: "/services/a:1"}); h.Err != zkwire.ErrNoNode {
		t.Fatalf("deleted node still visible locally: %d", h.Err)
	}
	create(t, c, 5, "/services/a:1", zkwire.FlagEphemeral)
	// One op at most: the re-created node's new ctime (a put replacing the
	// record), never a delete then a put.
	if got := localSeq(reg.Routes); got > seq+1 {
		t.Fatalf("the table took %d ops (seq %d -> %d): the delete leaked", got-seq, seq, got)
	}
	if n := len(reg.Routes.LocalRecords(routes.ZnodeKey("/services/a:1", ""))); n != 1 {
		t.Fatalf("local records %d", n)
	}
}

func localSeq(t *routes.Table) uint64 {
	s, _ := t.Snapshot(t.Local())
	return s.Seq
}

// A delete by a session that connected long before (a provider
// unregistering as it shuts down) is not held: it reaches the table, and
// so other agents, at once, not DeleteHold later (issue 26). Outside
// RecreateWindow no re-create is expected.
func TestDeliberateDeleteIsNotHeld(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.DeleteHold, c.RecreateWindow = 10*time.Second, time.Nanosecond })
	c := dialRaw(t, s)
	c.handshake(false)
	create(t, c, 1, "/services", 0)
	create(t, c, 2, "/services/a:1", zkwire.FlagEphemeral)
	if h, _, _ := c.call(3, zkwire.OpDelete, &zkwire.PathVersion{Path: "/services/a:1", Version: -1}); h.Err != zkwire.ErrOK {
		t.Fatalf("delete: err %d", h.Err)
	}
	if n := len(reg.Routes.LocalRecords(routes.ZnodeKey("/services/a:1", ""))); n != 0 {
		t.Fatalf("the delete's answer came with %d records still in the table: it was held", n)
	}
	// Created again, it is back; and deleted in a multi, it goes at once too.
	create(t, c, 4, "/services/a:1", zkwire.FlagEphemeral)
	if n := len(reg.Routes.LocalRecords(routes.ZnodeKey("/services/a:1", ""))); n != 1 {
		t.Fatalf("re-created: %d records, want 1", n)
	}
	if h, _, _ := c.call(5, zkwire.OpMulti, &zkwire.MultiRequest{Ops: []zkwire.MultiOp{{Type: zkwire.OpDelete, Path: "/services/a:1", Version: -1}}}); h.Err != zkwire.ErrOK {
		t.Fatalf("multi delete: err %d", h.Err)
	}
	if n := len(reg.Routes.LocalRecords(routes.ZnodeKey("/services/a:1", ""))); n != 0 {
		t.Fatalf("the multi's answer came with %d records still in the table: it was held", n)
	}
}

// A held delete reaches the table once DeleteHold passes.
func TestHeldDeleteIsReleased(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.DeleteHold = 20 * time.Millisecond })
	c := dialRaw(t, s)
	c.handshake(false)
	create(t, c, 1, "/e", zkwire.FlagEphemeral)
	c.call(2, zkwire.OpDelete, &zkwire.PathVersion{Path: "/e", Version: -1})
	testutil.Eventually(t, 10*time.Second, func() error {
		if len(reg.Routes.LocalRecords(routes.ZnodeKey("/e", ""))) != 0 {
			return errors.New("the held delete never reached the table")
		}
		return nil
	})
}

// Two spellings of one Dubbo URL leaf name one node here, so a connection
// watching both gets an event for each, each with the path it asked with
// (issue 23 item 6: the second watch was dropped).
func TestWatchesOnTwoSpellingsOfOneURLBothFire(t *testing.T) {
	s, _ := startServer(t)
	w, c := dialRaw(t, s), dialRaw(t, s)
	w.handshake(false)
	c.handshake(false)
	for i, p := range []string{"/dubbo", "/dubbo/demo.Api", "/dubbo/demo.Api/providers"} {
		create(t, c, int32(i+1), p, 0)
	}
	dir := "/dubbo/demo.Api/providers/"
	za := dir + javaEncode("dubbo://10.0.0.5:20880/demo.Api?z=1&a=2")
	az := dir + javaEncode("dubbo://10.0.0.5:20880/demo.Api?a=2&z=1")
	create(t, c, 4, za, zkwire.FlagEphemeral)
	for i, p := range []string{za, az} {
		if h, _, _ := w.call(int32(i+1), zkwire.OpGetData, &zkwire.PathWatch{Path: p, Watch: true}); h.Err != 0 {
			t.Fatalf("getData %s: %d", p, h.Err)
		}
	}
	c.call(5, zkwire.OpDelete, &zkwire.PathVersion{Path: za, Version: -1})
	_, _, evs := w.call(-2, zkwire.OpPing, nil)
	got := map[string]int32{}
	for _, e := range evs {
		got[e.Path] = e.Type
	}
	if len(evs) != 2 || got[za] != zkwire.EventNodeDeleted || got[az] != zkwire.EventNodeDeleted {
		t.Fatalf("events %+v, want NodeDeleted on each spelling", evs)
	}
	// Both were one-shot: a re-create fires nothing more.
	create(t, c, 6, za, zkwire.FlagEphemeral)
	if _, _, evs := w.call(-2, zkwire.OpPing, nil); len(evs) != 0 {
		t.Fatalf("events after the one-shot watches fired: %+v", evs)
	}
}
