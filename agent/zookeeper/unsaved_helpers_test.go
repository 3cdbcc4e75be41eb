package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

// diskRegistry is the agent's own Host (package host) over a real lease
// store in a data dir. A test makes its lease writes fail as a full disk
// does (lease.Store.FailWritesForTest), and its rule writes (rulesErr,
// standing for the agent's rule store on the same disk); every delta the
// host gossips is counted.
type diskRegistry struct {
	host.Host
	store     *lease.Store
	dir       string
	published atomic.Int64
	rulesErr  atomic.Pointer[error]
	// failLease, when set, fails every write of the lease with that id
	// alone (a disk that fills between two writes).
	failLease atomic.Pointer[string]
	// beforeRules, when set, runs at the start of every ApplyRules.
	beforeRules atomic.Pointer[func()]
}

func (d *diskRegistry) leaseFails(id string) bool {
	f := d.failLease.Load()
	return f != nil && *f == id
}

func (d *diskRegistry) Hold(l lease.Lease, recs []routes.Record) (lease.Saving, error) {
	if d.leaseFails(l.ID) {
		return lease.Saving{}, errDiskFull
	}
	return d.Host.Hold(l, recs)
}

func (d *diskRegistry) Drop(door, id string) (lease.Saving, error) {
	if d.leaseFails(id) {
		return lease.Saving{}, errDiskFull
	}
	return d.Host.Drop(door, id)
}

func (d *diskRegistry) DropLease(door, id string) error {
	if d.leaseFails(id) {
		return errDiskFull
	}
	return d.Host.DropLease(door, id)
}

// HoldAll fails whole when one of its leases fails (failLease).
func (d *diskRegistry) HoldAll(cs []lease.Change) (lease.Saving, error) {
	for _, c := range cs {
		if d.leaseFails(c.Lease.ID) {
			return lease.Saving{}, errDiskFull
		}
	}
	return d.Host.HoldAll(cs)
}

// Write fails whole when one of its leases fails (failLease).
func (d *diskRegistry) Write(unlock func(), ws ...lease.Write) error {
	for _, w := range ws {
		if d.leaseFails(w.Lease.ID) {
			return errDiskFull
		}
	}
	return d.Host.Write(unlock, ws...)
}

var errDiskFull = errors.New("saving to the data dir failed, so the change was not made: no space left on device")

func (d *diskRegistry) ApplyRules(puts []routes.Record, deletes []string) (bool, error) {
	if f := d.beforeRules.Load(); f != nil {
		(*f)()
	}
	if err := d.rulesErr.Load(); err != nil {
		return false, *err
	}
	return d.Host.ApplyRules(puts, deletes)
}

// breakLeases makes lease writes fail until the returned heal.
func (d *diskRegistry) breakLeases() (heal func()) { return d.store.FailWritesForTest() }

// breakRules makes rule writes fail until the returned heal.
func (d *diskRegistry) breakRules() (heal func()) {
	err := errDiskFull
	d.rulesErr.Store(&err)
	return func() { d.rulesErr.Store(nil) }
}

// fillDisk makes every write fail until the returned heal.
func (d *diskRegistry) fillDisk() (heal func()) {
	h1, h2 := d.breakLeases(), d.breakRules()
	return func() { h1(); h2() }
}

// saved is what a restart would restore of the ZooKeeper sessions'
// leases: "path=data" of each record, sorted.
func (d *diskRegistry) saved(t testing.TB) []string {
	t.Helper()
	recs, err := lease.SavedRecords(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rs := range recs {
		for _, r := range rs {
			if r.Znode != nil {
				out = append(out, r.Znode.Path+"="+string(r.Znode.Data))
			}
		}
	}
	slices.Sort(out)
	return out
}

// local is "path=data" of this agent's own znode records, sorted.
func (d *diskRegistry) local() []string {
	var out []string
	for _, r := range d.Table().LocalRecords("") {
		if r.Znode != nil {
			out = append(out, r.Znode.Path+"="+string(r.Znode.Data))
		}
	}
	slices.Sort(out)
	return out
}

// startDiskServer runs a Server over a diskRegistry in a fresh data dir;
// logs, when given, receives what it logs.
func startDiskServer(t testing.TB, logs *logLines, tune ...func(*Config)) (*Server, *diskRegistry) {
	t.Helper()
	dir := t.TempDir()
	table := routes.NewTable("local", 1)
	store := lease.NewStore(dir, table, slog.New(slog.DiscardHandler))
	store.Restore()
	reg := &diskRegistry{store: store, dir: dir}
	reg.Host = host.New(host.Config{Table: table, Leases: store,
		Publish: func(routes.Delta) { reg.published.Add(1) }}).For(door)
	cfg := Config{Host: reg, DeleteHold: 50 * time.Millisecond}
	if logs != nil {
		cfg.Logger = slog.New(logs)
	}
	for _, f := range tune {
		f(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	doortest.Serve(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	saver := make(chan struct{})
	go func() {
		defer close(saver)
		store.SaveLoop(ctx) // what Forget could not save, once the disk takes writes
	}()
	t.Cleanup(func() {
		s.Close()
		cancel()
		<-saver
		store.Freeze(false)
	})
	return s, reg
}

// logLines is a slog handler keeping every message, for tests that wait
// for something the door logs.
type logLines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	l.mu.Unlock()
	return nil
}

// count is how many messages hold sub.
func (l *logLines) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, sub) {
			n++
		}
	}
	return n
}

// quiet checks that w, which armed watches, has been sent no
// notification: a round trip returns any queued before its reply.
func quiet(t testing.TB, w *raw, xid int32) {
	t.Helper()
	if _, _, events := w.call(xid, zkwire.OpExists, &zkwire.PathWatch{Path: "/no-such-node"}); len(events) > 0 {
		t.Fatalf("a change that was refused fired watches: %+v", events)
	}
}

// dataOf is the data and version of path as c sees it, or its error code.
func dataOf(t testing.TB, c *raw, xid int32, path string) string {
	t.Helper()
	h, d, _ := c.call(xid, zkwire.OpGetData, &zkwire.PathWatch{Path: path})
	if h.Err != 0 {
		return fmt.Sprintf("err %d", h.Err)
	}
	var got zkwire.GetDataResponse
	got.Decode(d)
	return fmt.Sprintf("%s v%d", got.Data, got.Stat.Version)
}
