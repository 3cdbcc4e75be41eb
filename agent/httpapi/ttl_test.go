package httpapi

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// The expire loop wakes for the earliest deadline, no sooner than expireGap
// after its last look, and not at all while no registration has a TTL.
func TestExpireLoopWakesForTheEarliestDeadlineOnly(t *testing.T) {
	tt := newTTLs()
	kicked := func() bool {
		select {
		case <-tt.kick:
			return true
		default:
			return false
		}
	}
	now := time.Now()
	if !tt.nextLook().IsZero() || kicked() {
		t.Fatal("a fresh agent's expire loop is due to look")
	}
	tt.setDeadline("a", now.Add(time.Second))
	if got := tt.nextLook(); !got.Equal(now.Add(time.Second)) || !kicked() {
		t.Fatalf("after the first deadline: next look %v (want a's deadline), kicked false", got.Sub(now))
	}
	if got := tt.expired(now); len(got) != 0 {
		t.Fatalf("expired %v before any deadline", got)
	}
	tt.setDeadline("b", now.Add(10*time.Millisecond))
	if got := tt.nextLook(); !got.Equal(now.Add(expireGap)) || !kicked() {
		t.Fatalf("a deadline sooner than the next look: next look %v, want expireGap after the last", got.Sub(now))
	}
	tt.setDeadline("c", now.Add(5*time.Second))
	tt.set("a", time.Hour) // renewed: later than the next look
	if kicked() {
		t.Fatal("deadlines later than the next look woke the loop")
	}
	if got := tt.expired(now.Add(expireGap)); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("expired %v, want [b]", got)
	}
	if got := tt.nextLook(); !got.Equal(now.Add(5 * time.Second)) {
		t.Fatalf("next look %v, want c's deadline", got.Sub(now))
	}
	tt.clear("a")
	if got := tt.expired(now.Add(6 * time.Second)); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("expired %v, want [c]", got)
	}
	if !tt.nextLook().IsZero() {
		t.Fatal("no deadline left, yet the loop is due to look")
	}
}

// End to end on one agent: a URL registered with a TTL goes when it runs
// out, and the loop then sleeps.
func TestTTLExpiryThenLoopSleeps(t *testing.T) {
	testutil.CheckLeaks(t)
	a := startLone(t)
	if _, err := a.RegisterURL("dubbo://10.0.0.2:20880/com.example.Forever", 0); err != nil {
		t.Fatal(err)
	}
	if !a.ttl.nextLook().IsZero() {
		t.Fatal("no TTL registered, yet the expire loop is due to look")
	}
	const u = "dubbo://10.0.0.1:20880/com.example.Brief"
	rec, err := a.RegisterURL(u, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	key := routes.URLKey(rec.Interface, rec.Category, rec.URL)
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := len(a.table.LocalRecords(key)); n != 0 {
			return fmt.Errorf("%s still has %d records", key, n)
		}
		return nil
	})
	if !a.ttl.nextLook().IsZero() {
		t.Fatal("the only TTL expired, yet the loop is due to look")
	}
}
