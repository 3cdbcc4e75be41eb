package redis

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// Each field is a lease of its own whose deadline is the expiry its
// client wrote: renewed by HSET, dropped by HDEL.
func TestEachFieldIsALease(t *testing.T) {
	srv, f := startDoor(t, Config{})
	c := dialClient(t, tcp(srv.Addr()))
	rk := urlRec("com.foo.Bar", "providers", provider1).Key()
	c.do("HSET", barKey, provider1, later)
	l, ok := f.Lease(door, rk)
	if !ok || l.Deadline.UnixMilli() != 4102444800000 || !slicesEqual(l.Keys, []string{rk}) {
		t.Fatalf("lease after HSET: %+v, %v", l, ok)
	}
	c.do("HSET", barKey, provider1, later2)
	if l, _ := f.Lease(door, rk); l.Deadline.UnixMilli() != 4102444860000 {
		t.Fatalf("lease deadline after the renewal: %v", l.Deadline)
	}
	c.do("HDEL", barKey, provider1)
	if _, ok := f.Lease(door, rk); ok {
		t.Fatal("the lease outlived HDEL")
	}
}

// A field the data dir cannot save is refused, and nothing changes.
func TestUnsavedFieldIsRefused(t *testing.T) {
	srv, f := startDoor(t, Config{})
	hosttest.SetErr(&f.LeaseErr, errors.New("no space left on device"))
	c := dialClient(t, tcp(srv.Addr()))
	if got := c.do("HSET", barKey, provider1, later); !strings.HasPrefix(got, "-ERR namecast could not save the change: ") {
		t.Fatalf("HSET on a full disk: %q", got)
	}
	if got := c.do("HLEN", barKey); got != ":0\r\n" {
		t.Fatalf("HLEN after the refusal: %q", got)
	}
	hosttest.SetErr(&f.LeaseErr, nil)
	if got := c.do("HSET", barKey, provider1, later); got != ":1\r\n" {
		t.Fatalf("HSET once the disk takes writes: %q", got)
	}
}

// A field held before the agent restarted is held again, with its saved
// expiry, and withdrawn at it unless renewed.
func TestRestoredFieldExpires(t *testing.T) {
	table := routes.NewTable("local", 1)
	f := hosttest.New(table)
	rec := urlRec("com.foo.Bar", "providers", provider1)
	table.ApplyLocal([]routes.Record{rec}, nil) // republished at start
	exp := time.Now().Add(500 * time.Millisecond)
	f.Restore(lease.Lease{Door: door, ID: rec.Key(), Keys: []string{rec.Key()}, Deadline: exp})
	srv, _ := startDoor(t, Config{Host: f, Sweep: 10 * time.Millisecond})
	c := dialClient(t, tcp(srv.Addr()))
	ms := strconv.FormatInt(exp.UnixMilli(), 10)
	if got := c.do("HGET", barKey, provider1); got != "$13\r\n"+ms+"\r\n" {
		t.Fatalf("HGET of the restored field: %q, want its saved expiry %s", got, ms)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if _, ok := table.LocalRecord(rec.Key()); ok {
			return errors.New("the restored field is still held")
		}
		return nil
	})
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }
