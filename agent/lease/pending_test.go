package lease

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/atomicfile"
	"github.com/namecast/namecast/routes"
)

// A snapshot written between a Hold and the door applying what it holds
// (another writer's entry outgrew the log) keeps the held records, not the
// table's records of before: the snapshot replaces the log, so the Hold's
// own entry is gone after it. Before, the snapshot read the lease's
// records from the table, where the door had not put them yet, and a
// registration acknowledged right after was restored with no records.
func TestSnapshotBetweenHoldAndApplyKeepsTheHeldRecords(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	r := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "held", Addr: "10.0.0.7:1"}}
	l := Lease{Door: "test", ID: "held", Keys: []string{r.Key()}}
	sv, err := a.leases.Hold(l, []routes.Record{r})
	if err != nil {
		t.Fatal(err)
	}
	a.leases.saveMu.Lock()
	a.leases.compactLeases() // another writer's entry outgrew the log
	a.leases.saveMu.Unlock()
	if got, want := restored(t, dir), []string{"a=10.0.0.1:1", "held=10.0.0.7:1"}; !slices.Equal(got, want) {
		t.Fatalf("before the door applied, a restart restores %v, want %v", got, want)
	}
	a.table.ApplyLocal([]routes.Record{r}, nil) // the door applies
	if err := sv.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := restored(t, dir), []string{"a=10.0.0.1:1", "held=10.0.0.7:1"}; !slices.Equal(got, want) {
		t.Fatalf("a restart restores %v, want %v", got, want)
	}
}

// Writers that change records under one lock (a door's) and wait for
// the disk after letting go of it share one fsync: 16 holds written
// before any of them waits are on disk after one. Before, Hold waited for
// its own fsync before the door could apply and let go, so the 16 took
// 16 fsyncs one after another (16 RocketMQ writers: p50 23 ms).
func TestHoldsWaitingTogetherShareOneFsync(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	const writers = 16
	var door sync.Mutex
	savings := make([]Saving, writers)
	for i := range writers {
		r := routes.Record{URL: &routes.URL{Interface: "com.example.Group", Category: "providers",
			URL: fmt.Sprintf("dubbo://10.0.1.%d:20880/com.example.Group", i)}}
		door.Lock()
		sv, err := a.leases.Hold(Lease{Door: "test", ID: r.Key(), Keys: []string{r.Key()}}, []routes.Record{r})
		if err != nil {
			t.Fatal(err)
		}
		a.table.ApplyLocal([]routes.Record{r}, nil)
		door.Unlock()
		savings[i] = sv
	}
	before := a.leases.log.Syncs()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i, sv := range savings {
		wg.Go(func() { errs[i] = sv.Wait() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := a.leases.log.Syncs() - before; n != 1 {
		t.Fatalf("%d holds waiting together took %d fsyncs, want 1", writers, n)
	}
	saved, err := SavedRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != writers {
		t.Fatalf("a restart restores %d leases, want %d", len(saved), writers)
	}
}

// A failed fsync of the log does not fail a change whose door already
// applied it when a fresh snapshot can be written instead: Wait writes
// one (what the store does after any failed fsync), and the change is on
// disk after all. When the snapshot fails too, Wait says so (the door
// does not acknowledge), and once the disk works again the next write
// snapshots first, so what the agent serves and what it saved agree.
func TestFailedFsyncIsSnapshotBeforeTheAnswer(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	realDir := atomicfile.SyncDir
	t.Cleanup(func() { atomicfile.SyncDir = realDir })
	eio := errors.New("input/output error")
	hold := func(name, addr string) error {
		t.Helper()
		r := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: name, Addr: addr}}
		sv, err := a.leases.Hold(Lease{Door: "test", ID: name, Keys: []string{r.Key()}}, []routes.Record{r})
		if err != nil {
			t.Fatal(err)
		}
		a.table.ApplyLocal([]routes.Record{r}, nil)
		return sv.Wait()
	}
	heal := a.leases.log.FailSyncs(eio)
	if err := hold("a", "10.0.0.1:1"); err != nil {
		t.Fatalf("with the snapshot written instead, Wait says %v", err)
	}
	if got, want := restored(t, dir), []string{"a=10.0.0.1:1"}; !slices.Equal(got, want) {
		t.Fatalf("a restart restores %v, want %v", got, want)
	}
	atomicfile.SyncDir = func(string) error { return eio }
	if err := hold("b", "10.0.0.2:1"); err == nil {
		t.Fatal("with neither the log nor a snapshot synced, Wait says the change is on disk")
	}
	heal()
	atomicfile.SyncDir = realDir
	if err := hold("c", "10.0.0.3:1"); err != nil {
		t.Fatal(err)
	}
	if got, want := restored(t, dir), []string{"a=10.0.0.1:1", "b=10.0.0.2:1", "c=10.0.0.3:1"}; !slices.Equal(got, want) {
		t.Fatalf("once the disk works, a restart restores %v, want %v (what the agent serves)", got, want)
	}
}

// A door renewing a registration that changed nothing writes no entry:
// RecordsAfter hands Hold the records as the table will hold them, a
// broker keeping the stamp the table gave it, so they hash as saved.
// Without it, each renewal (a broker's every 30 s) wrote the unstamped
// records, then the stamped ones, and waited for an fsync.
func TestRenewalThatChangesNothingWritesNothing(t *testing.T) {
	a := leaseAgent(t, t.TempDir())
	b := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "m", Addr: "10.0.0.1:1"}}
	q1 := routes.Record{Queue: &routes.Queue{Topic: "T1", BrokerName: "m", ReadQueueNums: 4, WriteQueueNums: 4}}
	q2 := routes.Record{Queue: &routes.Queue{Topic: "T2", BrokerName: "m", ReadQueueNums: 4, WriteQueueNums: 4}}
	l := Lease{Door: "test", ID: "m", Keys: []string{b.Key()}, Prefixes: []string{routes.QueuePrefix("m")}}
	register := func(puts []routes.Record, deletes []string) []routes.Record {
		t.Helper()
		recs := l.RecordsAfter(a.table, puts, deletes)
		sv, err := a.leases.Hold(l, recs)
		if err != nil {
			t.Fatal(err)
		}
		a.table.ApplyLocal(puts, deletes)
		if err := sv.Wait(); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	register([]routes.Record{b, q1}, nil)
	before := a.leases.log.Last()
	register([]routes.Record{b, q1}, nil)
	if n := a.leases.log.Last() - before; n != 0 {
		t.Fatalf("a renewal that changed nothing wrote %d entries", n)
	}
	recs := register([]routes.Record{b, q2}, []string{q1.Key()})
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key())
	}
	if want := []string{b.Key(), q2.Key()}; !slices.Equal(keys, want) {
		t.Fatalf("RecordsAfter = %q, want %q", keys, want)
	}
	if got := l.Records(a.table); len(got) != 2 || got[0].Broker.Stamp != recs[0].Broker.Stamp {
		t.Fatalf("the table holds %+v after, RecordsAfter said %+v", got, recs)
	}
}
