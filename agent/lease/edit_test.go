package lease

import (
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// appendEdits writes an entry of edits as the store writes one.
func appendEdits(t *testing.T, a *testAgent, e logEntry) {
	t.Helper()
	a.leases.saveMu.Lock()
	seq, err := a.leases.appendLeaseEntry(e)
	a.leases.saveMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.leases.log.Wait(seq); err != nil {
		t.Fatal(err)
	}
}

func broker(name, addr string) routes.Record {
	return routes.Record{Broker: &routes.Broker{Cluster: "c", Name: name, Addr: addr}}
}

// Edits replay onto the lease as the snapshot and the entries before
// them left it: puts join, deletes leave, a drop forgets the lease, and
// a whole lease written after edits replaces what they made.
func TestEditsReplayOntoTheirLease(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{}) // whole, then edited
	edit := func(id string, puts []routes.Record, deletes ...string) leaseEdit {
		return leaseEdit{Door: "test", ID: id, Puts: puts, Deletes: deletes}
	}
	b1, b2, b3 := broker("b1", "10.0.1.1:1"), broker("b2", "10.0.1.2:1"), broker("b3", "10.0.1.3:1")
	appendEdits(t, a, logEntry{Edits: []leaseEdit{edit("s", []routes.Record{b1, b2})}})
	appendEdits(t, a, logEntry{Edits: []leaseEdit{edit("s", []routes.Record{b3}, b1.Key()), edit("a", []routes.Record{broker("a2", "10.0.0.2:1")})}})
	want := []string{"a2=10.0.0.2:1", "a=10.0.0.1:1", "b2=10.0.1.2:1", "b3=10.0.1.3:1"}
	if got := restored(t, dir); !slices.Equal(got, want) {
		t.Fatalf("restores %v, want %v", got, want)
	}
	appendEdits(t, a, logEntry{Drop: &leaseRef{Door: "test", ID: "s"}})
	appendEdits(t, a, logEntry{Edits: []leaseEdit{edit("s", []routes.Record{b1})}})
	want = []string{"a2=10.0.0.2:1", "a=10.0.0.1:1", "b1=10.0.1.1:1"}
	if got := restored(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after a drop and an edit, restores %v, want %v", got, want)
	}
	saved, _, err := readSavedLeases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range saved {
		if sl.ID == "a" && !slices.Equal(sl.Keys, []string{broker("a", "").Key(), broker("a2", "").Key()}) {
			t.Fatalf("edited lease a keys %v", sl.Keys)
		}
	}
	putBroker(a, "a", "10.0.0.9:1", time.Time{}) // whole again: a's edits are gone with it
	want = []string{"a=10.0.0.9:1", "b1=10.0.1.1:1"}
	if got := restored(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after a whole lease, restores %v, want %v", got, want)
	}
}
