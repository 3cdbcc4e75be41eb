package zookeeper

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// What ZooKeeper allows on its own nodes (issue 25: both were
// BADARGUMENTS): a node under /zookeeper, data on / and /zookeeper; the
// special nodes cannot be deleted and /zookeeper/config is read-only.
func TestZooKeeperNodesAndRootTakeWrites(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	create(t, r, 1, "/zookeeper/x", 0)
	for i, c := range []struct {
		op   int32
		rec  zkwire.Record
		want int32
	}{
		{zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/", Data: []byte("r"), Version: 0}, 0},
		{zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/zookeeper", Data: []byte("z"), Version: -1}, 0},
		{zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/zookeeper/config", Version: -1}, zkwire.ErrNoAuth},
		{zkwire.OpCreate, &zkwire.CreateRequest{Path: "/zookeeper/config/x", ACL: openACL}, zkwire.ErrNoAuth},
		{zkwire.OpDelete, &zkwire.PathVersion{Path: "/zookeeper", Version: -1}, zkwire.ErrBadArguments},
		{zkwire.OpDelete, &zkwire.PathVersion{Path: "/", Version: -1}, zkwire.ErrBadArguments},
		{zkwire.OpDelete, &zkwire.PathVersion{Path: "/zookeeper/x", Version: -1}, 0},
	} {
		if h, _, _ := r.call(int32(10+i), c.op, c.rec); h.Err != c.want {
			t.Fatalf("step %d (op %d): err %d, want %d", i, c.op, h.Err, c.want)
		}
	}
	if code, data, _ := getData(r, 30, "/", false); code != 0 || data != "r" {
		t.Fatalf("get /: err %d data %q", code, data)
	}
}

// Reads of a path ZooKeeper would not accept in a write answer NONODE, as
// ZooKeeper's do (they were BADARGUMENTS).
func TestReadsOfInvalidPathsAnswerNoNode(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	for i, p := range []string{"rel", "/a//b", "/a/", "/a/./b", ""} {
		for j, op := range []int32{zkwire.OpExists, zkwire.OpGetData, zkwire.OpGetChildren2} {
			if h, _, _ := r.call(int32(i*3+j+1), op, &zkwire.PathWatch{Path: p}); h.Err != zkwire.ErrNoNode {
				t.Fatalf("op %d on %q: err %d, want NONODE", op, p, h.Err)
			}
		}
	}
}

// A container goes once its last child went; one that never had a child
// stays, as ZooKeeper's ContainerManager does (they were never reaped).
func TestEmptyContainerIsReaped(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.ContainerCheck = time.Hour }) // the test runs the checks
	r := dialRaw(t, s)
	r.handshake(false)
	for i, p := range []string{"/lock", "/never"} {
		if h, _, _ := r.call(int32(i+1), zkwire.OpCreateContainer, &zkwire.CreateRequest{Path: p, ACL: openACL, Flags: zkwire.FlagContainer}); h.Err != 0 {
			t.Fatalf("createContainer %s: %d", p, h.Err)
		}
	}
	create(t, r, 3, "/lock/c", zkwire.FlagEphemeral)
	s.reapContainers()
	s.reapContainers()
	if h, _, _ := r.call(4, zkwire.OpExists, &zkwire.PathWatch{Path: "/lock"}); h.Err != 0 {
		t.Fatalf("a container with a child was reaped: %d", h.Err)
	}
	r.call(5, zkwire.OpDelete, &zkwire.PathVersion{Path: "/lock/c", Version: -1})
	s.reapContainers()
	if h, _, _ := r.call(6, zkwire.OpExists, &zkwire.PathWatch{Path: "/lock"}); h.Err != 0 {
		t.Fatalf("a container was reaped at the first check that found it empty: %d", h.Err)
	}
	s.reapContainers()
	if h, _, _ := r.call(7, zkwire.OpExists, &zkwire.PathWatch{Path: "/lock"}); h.Err != zkwire.ErrNoNode {
		t.Fatalf("an empty container survived two checks: %d", h.Err)
	}
	if h, _, _ := r.call(8, zkwire.OpExists, &zkwire.PathWatch{Path: "/never"}); h.Err != 0 {
		t.Fatalf("a container that never had a child was reaped: %d", h.Err)
	}
}

// conf, cons, envi and wchs are answered; the other words ZooKeeper knows
// say they are not served, as ZooKeeper says of words not whitelisted
// (they closed the connection with nothing).
func TestMoreFourLetterWords(t *testing.T) {
	s, _ := startServer(t)
	w := dialRaw(t, s)
	sess := w.handshake(false)
	w.call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/x", Watch: true})
	for word, want := range map[string]string{
		"conf": "maxSessionTimeout=40000\n",
		"cons": fmt.Sprintf("sid=0x%x", sess.SessionID),
		"envi": "Environment:\nzookeeper.version=" + Version,
		"wchs": "1 connections watching 1 paths\nTotal watches:1\n",
		"dump": "dump is not executed because it is not in the whitelist.\n",
		"wchc": "wchc is not executed because it is not in the whitelist.\n",
	} {
		r := dialRaw(t, s)
		r.nc.Write([]byte(word))
		b, err := io.ReadAll(r.br)
		if err != nil || !strings.Contains(string(b), want) {
			t.Fatalf("%s: %q %v, want %q in it", word, b, err, want)
		}
	}
}

// A multi of checks and deletes, as zkCli's deleteall sends, runs all or
// nothing against this agent's view, with ZooKeeper's per-operation
// results (it answered UNIMPLEMENTED, so deleteall failed).
func TestMultiOfDeletes(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	for i, p := range []string{"/t", "/t/a", "/t/b"} {
		create(t, r, int32(i+1), p, 0)
	}
	multi := func(xid int32, ops ...zkwire.MultiOp) []int32 {
		h, d, _ := r.call(xid, zkwire.OpMulti, &zkwire.MultiRequest{Ops: ops})
		var resp zkwire.MultiResponse
		resp.Decode(d)
		if h.Err != 0 || d.Err() != nil {
			t.Fatalf("multi: header err %d, %v", h.Err, d.Err())
		}
		return resp.Errs
	}
	del := func(p string) zkwire.MultiOp { return zkwire.MultiOp{Type: zkwire.OpDelete, Path: p, Version: -1} }
	got := multi(10, zkwire.MultiOp{Type: zkwire.OpCheck, Path: "/t", Version: 0}, del("/t/a"), del("/t"), del("/t/b"))
	if fmt.Sprint(got) != fmt.Sprint([]int32{0, 0, zkwire.ErrNotEmpty, zkwire.ErrRuntimeInconsistency}) {
		t.Fatalf("failing multi: %v", got)
	}
	if code, _, _ := getData(r, 11, "/t/a", false); code != 0 {
		t.Fatalf("a failed multi deleted /t/a: %d", code)
	}
	if got := multi(12, del("/t/a"), del("/t/b"), del("/t")); fmt.Sprint(got) != "[0 0 0]" {
		t.Fatalf("multi: %v", got)
	}
	if code, _, _ := getData(r, 13, "/t", false); code != zkwire.ErrNoNode {
		t.Fatalf("/t after the multi: %d", code)
	}
	h, _, _ := r.call(14, zkwire.OpMulti, &zkwire.MultiRequest{Unsupported: zkwire.OpCreate})
	if h.Err != zkwire.ErrUnimplemented {
		t.Fatalf("multi with a create: %d", h.Err)
	}
}

// The built-in nodes answer an empty data buffer, not a null one, and
// /zookeeper/config has aversion -1, as ZooKeeper 3.8 serves them
// (issue 41 item 5: a null buffer made every Curator 5 client log a
// NullPointerException from EnsembleTracker at start).
func TestBuiltinNodesServeAnEmptyBuffer(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	for i, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		h, d, _ := r.call(int32(i+1), zkwire.OpGetData, &zkwire.PathWatch{Path: p})
		if h.Err != 0 {
			t.Fatalf("getData %s: err %d", p, h.Err)
		}
		var resp zkwire.GetDataResponse
		resp.Decode(d)
		if d.Err() != nil || resp.Data == nil {
			t.Fatalf("getData %s: data %v (err %v), want an empty buffer", p, resp.Data, d.Err())
		}
		if want := map[bool]int32{true: -1, false: 0}[p == configPath]; resp.Stat.Aversion != want {
			t.Fatalf("getData %s: aversion %d, want %d", p, resp.Stat.Aversion, want)
		}
	}
}
