package zookeeper

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

func mkNode(c *raw, xid int32, path, data string, flags int32) int32 {
	c.t.Helper()
	h, _, _ := c.call(xid, zkwire.OpCreate, &zkwire.CreateRequest{Path: path, Data: []byte(data), ACL: openACL, Flags: flags})
	return h.Err
}

func setNode(c *raw, xid int32, path, data string, version int32) int32 {
	c.t.Helper()
	h, _, _ := c.call(xid, zkwire.OpSetData, &zkwire.SetDataRequest{Path: path, Data: []byte(data), Version: version})
	return h.Err
}

func delNode(c *raw, xid int32, path string) int32 {
	c.t.Helper()
	h, _, _ := c.call(xid, zkwire.OpDelete, &zkwire.PathVersion{Path: path, Version: -1})
	return h.Err
}

func watchAll(t testing.TB, w *raw, xid int32, data []string, children []string) {
	t.Helper()
	for _, p := range data {
		xid++
		if h, _, _ := w.call(xid, zkwire.OpExists, &zkwire.PathWatch{Path: p, Watch: true}); h.Err != 0 && h.Err != zkwire.ErrNoNode {
			t.Fatalf("exists %s: err %d", p, h.Err)
		}
	}
	for _, p := range children {
		xid++
		if h, _, _ := w.call(xid, zkwire.OpGetChildren, &zkwire.PathWatch{Path: p, Watch: true}); h.Err != 0 {
			t.Fatalf("getChildren %s: err %d", p, h.Err)
		}
	}
}

// With a data dir that cannot save (a full disk), an ephemeral create,
// setData or delete, and a persistent one, answers SYSTEMERROR and
// changes nothing anywhere: the tree, the watches, what is gossiped,
// what a restart restores, the session's own state. Once the disk takes
// writes again the session carries on from where it was. Before, the
// ephemeral create and delete answered OK (the create was lost at the
// next restart, the deleted znode came back), and the ephemeral setData
// answered SYSTEMERROR after changing the znode everywhere.
func TestEphemeralChangeThatCannotBeSavedChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration // RecreateWindow: is the delete held?
	}{{"delete held", time.Hour}, {"delete at once", time.Nanosecond}} {
		t.Run(tc.name, func(t *testing.T) {
			s, reg := startDiskServer(t, nil, func(c *Config) { c.RecreateWindow = tc.window })
			a := dialRaw(t, s)
			a.handshake(false)
			if mkNode(a, 1, "/e", "1", zkwire.FlagEphemeral) != 0 || mkNode(a, 2, "/p", "1", zkwire.FlagPersistent) != 0 {
				t.Fatal("setup creates failed")
			}
			fresh := dialRaw(t, s) // a session that holds no lease yet
			fresh.handshake(false)
			w := dialRaw(t, s)
			w.handshake(false)
			watchAll(t, w, 10, []string{"/e", "/p", "/n", "/f", "/q"}, []string{"/"})
			sent := reg.published.Load()

			heal := reg.fillDisk()
			for _, op := range []struct {
				what string
				code int32
			}{
				{"ephemeral create", mkNode(a, 3, "/n", "1", zkwire.FlagEphemeral)},
				{"first ephemeral create of a session", mkNode(fresh, 1, "/f", "1", zkwire.FlagEphemeral)},
				{"ephemeral setData", setNode(a, 4, "/e", "2", -1)},
				{"ephemeral delete", delNode(a, 5, "/e")},
				{"persistent create", mkNode(a, 6, "/q", "1", zkwire.FlagPersistent)},
				{"persistent setData", setNode(a, 7, "/p", "2", -1)},
				{"persistent delete", delNode(a, 8, "/p")},
			} {
				if op.code != zkwire.ErrSystem {
					t.Errorf("%s the data dir cannot save: err %d, want SYSTEMERROR (%d)", op.what, op.code, zkwire.ErrSystem)
				}
			}
			quiet(t, w, 20)
			if n := reg.published.Load() - sent; n != 0 {
				t.Errorf("refused changes were gossiped (%d deltas)", n)
			}
			for path, want := range map[string]string{"/e": "1 v0", "/p": "1 v0", "/n": "err -101", "/f": "err -101", "/q": "err -101"} {
				if got := dataOf(t, w, 21, path); got != want {
					t.Errorf("after refused changes %s reads %q, want %q", path, got, want)
				}
			}
			if got, want := reg.local(), []string{"/e=1"}; !slices.Equal(got, want) {
				t.Errorf("after refused changes the agent holds %q, want %q", got, want)
			}
			if got, want := reg.saved(t), []string{"/e=1"}; !slices.Equal(got, want) {
				t.Errorf("after refused changes a restart would restore %q, want %q", got, want)
			}

			heal()
			if code := setNode(a, 30, "/e", "2", 0); code != 0 {
				t.Fatalf("setData /e version 0 once the disk takes writes: err %d", code)
			}
			if code := mkNode(a, 31, "/n", "1", zkwire.FlagEphemeral); code != 0 {
				t.Fatalf("create /n once the disk takes writes: err %d", code)
			}
			if got, want := reg.saved(t), []string{"/e=2", "/n=1"}; !slices.Equal(got, want) {
				t.Fatalf("a restart would restore %q, want %q", got, want)
			}
			if code := delNode(a, 32, "/e"); code != 0 {
				t.Fatalf("delete /e once the disk takes writes: err %d", code)
			}
			if got, want := reg.saved(t), []string{"/n=1"}; !slices.Equal(got, want) {
				t.Fatalf("after the delete a restart would restore %q, want %q", got, want)
			}
		})
	}
}

// A closeSession whose withdrawal cannot be saved is not acknowledged:
// it answers SYSTEMERROR and the session lives on, connection, znodes
// and lease as they were (a restart would otherwise bring back the
// znodes of a session its client was told had closed, or the client would
// be told its session closed while its znodes stay). Once the disk takes
// writes, closeSession goes through and nothing comes back. Before, it
// answered OK and withdrew the znodes while their lease stayed saved.
func TestCloseSessionThatCannotBeSavedIsNotAcknowledged(t *testing.T) {
	s, reg := startDiskServer(t, nil)
	a := dialRaw(t, s)
	a.handshake(false)
	if mkNode(a, 1, "/e", "1", zkwire.FlagEphemeral) != 0 {
		t.Fatal("create /e failed")
	}
	w := dialRaw(t, s)
	w.handshake(false)
	watchAll(t, w, 10, []string{"/e"}, []string{"/"})
	sent := reg.published.Load()

	heal := reg.breakLeases()
	if h, _, _ := a.call(2, zkwire.OpCloseSession, nil); h.Err != zkwire.ErrSystem {
		t.Fatalf("closeSession the data dir cannot save: err %d, want SYSTEMERROR", h.Err)
	}
	if got := dataOf(t, a, 3, "/e"); got != "1 v0" {
		t.Fatalf("the session's connection after a refused close reads /e as %q", got)
	}
	quiet(t, w, 20)
	if n := reg.published.Load() - sent; n != 0 {
		t.Errorf("a refused close was gossiped (%d deltas)", n)
	}
	if got, want := reg.local(), []string{"/e=1"}; !slices.Equal(got, want) {
		t.Errorf("after a refused close the agent holds %q, want %q", got, want)
	}
	if got, want := reg.saved(t), []string{"/e=1"}; !slices.Equal(got, want) {
		t.Errorf("after a refused close a restart would restore %q, want %q", got, want)
	}

	heal()
	if h, _, _ := a.call(4, zkwire.OpCloseSession, nil); h.Err != 0 {
		t.Fatalf("closeSession once the disk takes writes: err %d", h.Err)
	}
	if got := reg.local(); len(got) != 0 {
		t.Fatalf("after the close the agent holds %q", got)
	}
	if got := reg.saved(t); len(got) != 0 {
		t.Fatalf("after the close a restart would restore %q", got)
	}
}

// A session that expires while the data dir cannot save its withdrawal
// loses its znodes at once (nobody is there to be told, and a dead
// client's znodes must not be served on), and the withdrawal is saved
// once the disk takes writes: a restart then brings nothing back. Before,
// the lease whose removal failed stayed in the data dir for good, and
// every restart before its deadline restored the expired znodes.
func TestExpiryThatCannotBeSavedIsSavedOnceTheDiskTakesWrites(t *testing.T) {
	s, reg := startDiskServer(t, nil, func(c *Config) { c.Grace = 50 * time.Millisecond })
	a := dialRaw(t, s)
	a.handshake(false)
	if mkNode(a, 1, "/e", "1", zkwire.FlagEphemeral) != 0 {
		t.Fatal("create /e failed")
	}
	heal := reg.breakLeases()
	a.nc.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := reg.local(); len(got) > 0 {
			return fmt.Errorf("the agent still holds %q", got)
		}
		if n := len(s.SessionIDs()); n != 0 {
			return fmt.Errorf("%d sessions", n)
		}
		return nil
	})
	if got, want := reg.saved(t), []string{"/e=1"}; !slices.Equal(got, want) {
		t.Fatalf("with the disk full a restart would restore %q, want %q (until its deadline)", got, want)
	}
	heal()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := reg.saved(t); len(got) != 0 {
			return fmt.Errorf("a restart would restore %q", got)
		}
		return nil
	})
}

// A multi of deletes is all or nothing when the data dir cannot save one
// of its parts: the deletes of two sessions' ephemeral znodes and of the
// persistent parent answer an error on the first part that cannot be
// saved (0 before it, RUNTIMEINCONSISTENCY after, as ZooKeeper answers a
// failed multi) and change nothing, whether the leases, the rules, both,
// or only the second session's lease cannot be saved (the sessions'
// leases are one write: the first operation of either answers the
// error). Once the disk takes writes the same multi goes through.
// Before, deletes whose lease could not be saved were applied and
// acknowledged, and a multi whose rule delete failed had already
// withdrawn the ephemeral znodes before it.
func TestMultiThatCannotBeSavedChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		brk   func(*diskRegistry) func()
		first int // the op answered SYSTEMERROR
	}{
		{"leases", (*diskRegistry).breakLeases, 0},
		{"rules", (*diskRegistry).breakRules, 2},
		{"both", (*diskRegistry).fillDisk, 0},
		{"the second session's lease", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, reg := startDiskServer(t, nil)
			a, b := dialRaw(t, s), dialRaw(t, s)
			a.handshake(false)
			bs := b.handshake(false)
			if tc.brk == nil {
				// The second session's lease cannot be saved: nor is
				// the first's, written with it.
				tc.brk = func(reg *diskRegistry) func() {
					id := sessionLeaseID(bs.SessionID)
					reg.failLease.Store(&id)
					return func() { reg.failLease.Store(nil) }
				}
			}
			if mkNode(a, 1, "/d", "p", zkwire.FlagPersistent) != 0 || mkNode(a, 2, "/d/a", "1", zkwire.FlagEphemeral) != 0 ||
				mkNode(b, 1, "/d/b", "1", zkwire.FlagEphemeral) != 0 {
				t.Fatal("setup creates failed")
			}
			w := dialRaw(t, s)
			w.handshake(false)
			watchAll(t, w, 10, []string{"/d", "/d/a", "/d/b"}, []string{"/", "/d"})
			sent := reg.published.Load()
			ops := []zkwire.MultiOp{{Type: zkwire.OpDelete, Path: "/d/a", Version: -1},
				{Type: zkwire.OpDelete, Path: "/d/b", Version: -1}, {Type: zkwire.OpDelete, Path: "/d", Version: -1}}

			heal := tc.brk(reg)
			h, d, _ := a.call(3, zkwire.OpMulti, &zkwire.MultiRequest{Ops: ops})
			var resp zkwire.MultiResponse
			resp.Decode(d)
			want := make([]int32, len(ops))
			want[tc.first] = zkwire.ErrSystem
			for i := tc.first + 1; i < len(ops); i++ {
				want[i] = zkwire.ErrRuntimeInconsistency
			}
			if h.Err != 0 || !slices.Equal(resp.Errs, want) {
				t.Errorf("multi the data dir cannot save: err %d results %v, want 0 %v", h.Err, resp.Errs, want)
			}
			quiet(t, w, 20)
			if n := reg.published.Load() - sent; n != 0 {
				t.Errorf("a refused multi was gossiped (%d deltas)", n)
			}
			for path, want := range map[string]string{"/d": "p v0", "/d/a": "1 v0", "/d/b": "1 v0"} {
				if got := dataOf(t, w, 21, path); got != want {
					t.Errorf("after a refused multi %s reads %q, want %q", path, got, want)
				}
			}
			if got, want := reg.saved(t), []string{"/d/a=1", "/d/b=1"}; !slices.Equal(got, want) {
				t.Errorf("after a refused multi a restart would restore %q, want %q", got, want)
			}

			heal()
			h, d, _ = a.call(4, zkwire.OpMulti, &zkwire.MultiRequest{Ops: ops})
			resp = zkwire.MultiResponse{}
			resp.Decode(d)
			if h.Err != 0 || !slices.Equal(resp.Errs, make([]int32, len(ops))) {
				t.Fatalf("multi once the disk takes writes: err %d results %v", h.Err, resp.Errs)
			}
			if got := reg.saved(t); len(got) != 0 {
				t.Fatalf("after the multi a restart would restore %q", got)
			}
			testutil.Eventually(t, 10*time.Second, func() error { // after DeleteHold
				if got := reg.local(); len(got) != 0 {
					return fmt.Errorf("after the multi the agent holds %q", got)
				}
				return nil
			})
		})
	}
}

// A multi whose rule delete is refused after its sessions' leases were
// written puts the leases back; when the disk refuses that too (it filled
// between the two), the answer is still the error and nothing changes in
// memory, the door says so at ERROR, no later lease write is taken on top
// of the refused change, and once the disk takes writes a snapshot of
// what is held makes the data dir agree again, with no request from the
// sessions. Before, the failed put-back was only logged: the data dir
// kept the sessions' leases without the znodes that stayed, until each
// session's next request happened to re-save its lease, and a restart
// meanwhile withdrew them cluster-wide.
func TestMultiWhoseUndoCannotBeSavedFailsLoudlyAndHeals(t *testing.T) {
	logs := &logLines{}
	s, reg := startDiskServer(t, logs)
	a, b := dialRaw(t, s), dialRaw(t, s)
	a.handshake(false)
	b.handshake(false)
	if mkNode(a, 1, "/d", "p", zkwire.FlagPersistent) != 0 || mkNode(a, 2, "/d/a", "1", zkwire.FlagEphemeral) != 0 ||
		mkNode(b, 1, "/d/b", "1", zkwire.FlagEphemeral) != 0 {
		t.Fatal("setup creates failed")
	}
	var healLeases atomic.Pointer[func()]                           // set by the door's goroutine
	fill := func() { h := reg.breakLeases(); healLeases.Store(&h) } // the disk fills once the leases are written
	reg.beforeRules.Store(&fill)
	healRules := reg.breakRules()
	ops := []zkwire.MultiOp{{Type: zkwire.OpDelete, Path: "/d/a", Version: -1},
		{Type: zkwire.OpDelete, Path: "/d/b", Version: -1}, {Type: zkwire.OpDelete, Path: "/d", Version: -1}}
	h, d, _ := a.call(3, zkwire.OpMulti, &zkwire.MultiRequest{Ops: ops})
	reg.beforeRules.Store(nil)
	if healLeases.Load() == nil {
		t.Fatal("the multi wrote no rule")
	}
	var resp zkwire.MultiResponse
	resp.Decode(d)
	if want := []int32{0, 0, zkwire.ErrSystem}; h.Err != 0 || !slices.Equal(resp.Errs, want) {
		t.Errorf("multi whose rule delete is refused: err %d results %v, want 0 %v", h.Err, resp.Errs, want)
	}
	w := dialRaw(t, s)
	w.handshake(false)
	for path, want := range map[string]string{"/d": "p v0", "/d/a": "1 v0", "/d/b": "1 v0"} {
		if got := dataOf(t, w, 21, path); got != want {
			t.Errorf("after a refused multi %s reads %q, want %q", path, got, want)
		}
	}
	if logs.count("could not be saved back") == 0 {
		t.Error("the failed put-back of the leases is not logged")
	}
	if code := mkNode(b, 2, "/d/c", "1", zkwire.FlagEphemeral); code != zkwire.ErrSystem {
		t.Errorf("an ephemeral create while the data dir holds the refused change answered %d, want SYSTEMERROR", code)
	}
	(*healLeases.Load())()
	healRules()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got, want := reg.saved(t), []string{"/d/a=1", "/d/b=1"}; !slices.Equal(got, want) {
			return fmt.Errorf("once the disk takes writes a restart would restore %q, want %q", got, want)
		}
		return nil
	})
	h, d, _ = a.call(4, zkwire.OpMulti, &zkwire.MultiRequest{Ops: ops})
	resp = zkwire.MultiResponse{}
	resp.Decode(d)
	if h.Err != 0 || !slices.Equal(resp.Errs, make([]int32, len(ops))) {
		t.Fatalf("multi once the disk takes writes: err %d results %v", h.Err, resp.Errs)
	}
	if got := reg.saved(t); len(got) != 0 {
		t.Fatalf("after the multi a restart would restore %q", got)
	}
}

// An ephemeral znode deleted through another agent (a command addressed
// to this one, commands.go) is withdrawn only once its session's lease is
// saved without it; until then the command stays, and is run again.
// Before, the znode was withdrawn and the command deleted whatever the
// data dir did, and a restart brought the znode back.
func TestPeerDeleteThatCannotBeSavedIsRetried(t *testing.T) {
	s, reg := startDiskServer(t, nil, func(c *Config) { c.ContainerCheck = 50 * time.Millisecond })
	a := dialRaw(t, s)
	a.handshake(false)
	if mkNode(a, 1, "/e", "1", zkwire.FlagEphemeral) != 0 {
		t.Fatal("create /e failed")
	}
	key := routes.ZnodeKey("/e", "")
	rec, _ := reg.Table().LocalRecord(key)
	heal := reg.breakLeases()
	cmd := deleteCommand(s.local, key, recordStamp(rec), false, time.Now())
	if _, err := reg.ApplyRules([]routes.Record{cmd}, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s.runCommands()
	}
	if got, want := reg.local(), []string{"/e=1"}; !slices.Equal(got, want) {
		t.Fatalf("after a peer's delete that could not be saved the agent holds %q, want %q", got, want)
	}
	if len(reg.Table().KVs(cmdNamespace)) != 1 {
		t.Fatal("the command of a delete that could not be saved was dropped")
	}
	heal()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := reg.local(); len(got) > 0 {
			return fmt.Errorf("the agent still holds %q", got)
		}
		if n := len(reg.Table().KVs(cmdNamespace)); n > 0 {
			return fmt.Errorf("%d commands left", n)
		}
		return nil
	})
	if got := reg.saved(t); len(got) != 0 {
		t.Fatalf("after the peer's delete a restart would restore %q", got)
	}
}
