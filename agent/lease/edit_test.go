package lease

import (
	"fmt"
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

// A Write with a data dir saves what it names, not the lease it leaves:
// the log grows by about the same for a session's thousandth znode as
// for its first. Before, each write saved the session's whole lease
// (every key and record), so the thousandth cost a thousand times the
// first.
func TestWriteSavesOnlyWhatItNames(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	id := Lease{Door: "zookeeper", ID: "s1", State: []byte(`{"id":1}`)}
	grew := func(i int) int64 {
		before := a.leases.log.Size()
		writeApplied(t, a, Write{Lease: id, Puts: []routes.Record{znode(fmt.Sprintf("/a/n%04d", i))}})
		return a.leases.log.Size() - before
	}
	first := grew(0)
	for i := 1; i < 999; i++ {
		grew(i)
	}
	if last := grew(999); last < 0 || last > first+16 {
		t.Fatalf("the first znode's write added %d bytes to the log, the thousandth's %d", first, last)
	}
	writeApplied(t, a, Write{Lease: Lease{Door: "zookeeper", ID: "s1"}, Deletes: []string{znode("/a/n0003").Key()}})
	a.leases.log.Close()
	b := leaseAgent(t, dir)
	ls := b.leases.RestoredLeases("zookeeper")
	if len(ls) != 1 || len(ls[0].Keys) != 999 || string(ls[0].State) != `{"id":1}` || slices.Contains(ls[0].Keys, znode("/a/n0003").Key()) {
		t.Fatalf("restored %d leases, the first with %d keys, state %s", len(ls), len(ls[0].Keys), ls[0].State)
	}
	if got := b.table.LocalRecords(""); len(got) != 999 {
		t.Fatalf("restored %d records, want 999", len(got))
	}
}

// A snapshot taken while a Write is written but not yet applied by its
// door holds the records the write puts (the table does not have them
// yet), and not the ones it deletes.
func TestSnapshotHoldsAnEditNotYetApplied(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	id := Lease{Door: "zookeeper", ID: "s1"}
	writeApplied(t, a, Write{Lease: id, Puts: []routes.Record{znode("/a"), znode("/b")}})
	sv, err := a.leases.Write([]Write{{Lease: id, Puts: []routes.Record{znode("/c")}, Deletes: []string{znode("/a").Key()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.leases.saveMu.Lock()
	err = a.leases.compactLeases()
	a.leases.saveMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	saved, _, err := readSavedLeases(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sl := range saved {
		for _, r := range sl.Records {
			got = append(got, r.Znode.Path)
		}
	}
	slices.Sort(got)
	if want := []string{"/b", "/c"}; !slices.Equal(got, want) {
		t.Fatalf("the snapshot holds %v, want %v", got, want)
	}
	a.table.ApplyLocal([]routes.Record{znode("/c")}, []string{znode("/a").Key()})
	if err := sv.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A refresh of a lease saved by edits (its deadline moved past the
// slack) is saved as an edit naming no record.
func TestRefreshOfAnEditedLeaseNamesNoRecord(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	id := Lease{Door: "zookeeper", ID: "s1", Deadline: time.Now().Add(time.Hour)}
	for i := range 200 {
		writeApplied(t, a, Write{Lease: id, Puts: []routes.Record{znode(fmt.Sprintf("/a/n%04d", i))}})
	}
	id.Deadline = time.Now().Add(2 * time.Hour)
	writeApplied(t, a, Write{Lease: id})
	before := a.leases.log.Size()
	a.leases.saveLazyLeases()
	if grew := a.leases.log.Size() - before; grew <= 0 || grew > 400 {
		t.Fatalf("the refresh added %d bytes to the log", grew)
	}
	saved, _, _ := readSavedLeases(dir)
	if len(saved) != 1 || !saved[0].Deadline.Equal(id.Deadline) || len(saved[0].Records) != 200 {
		t.Fatalf("saved %+v", saved)
	}
}
