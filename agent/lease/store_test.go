package lease

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/sealed"
	"github.com/namecast/namecast/internal/wal"
	"github.com/namecast/namecast/routes"
)

// testAgent is the part of an agent the lease store uses: a table, and
// the store on a data dir, restored as a start would.
type testAgent struct {
	table  *routes.Table
	leases *Store
}

func leaseAgent(t testing.TB, dir string) *testAgent {
	t.Helper()
	table := routes.NewTable("self", uint64(time.Now().UnixNano()))
	a := &testAgent{table: table, leases: NewStore(dir, table, slog.New(slog.NewTextHandler(io.Discard, nil)))}
	a.leases.Restore()
	t.Cleanup(func() {
		if l := a.leases.log; l != nil {
			l.Close()
		}
	})
	return a
}

// putBroker applies broker name's record and holds it under a lease, as a
// door does.
func putBroker(a *testAgent, name, addr string, deadline time.Time) {
	r := routes.Record{Broker: &routes.Broker{Cluster: "c", Name: name, ID: 0, Addr: addr}}
	a.table.ApplyLocal([]routes.Record{r}, nil)
	a.leases.PutLease(Lease{Door: "test", ID: name, Keys: []string{r.Key()}, Deadline: deadline})
}

func dropBroker(a *testAgent, name string) {
	a.leases.DropLease("test", name)
	a.table.ApplyLocal(nil, []string{routes.Record{Broker: &routes.Broker{Name: name}}.Key()})
}

// restored lists, as "name=addr", the brokers a restart from dir restores.
func restored(t *testing.T, dir string) []string {
	t.Helper()
	saved, _, err := readSavedLeases(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sl := range saved {
		for _, r := range sl.Records {
			out = append(out, r.Broker.Name+"="+r.Broker.Addr)
		}
	}
	slices.Sort(out)
	return out
}

func TestLeaseLogReplaysPutsChangesAndDrops(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	putBroker(a, "a", "10.0.0.9:1", time.Time{}) // same keys, new record: written
	dropBroker(a, "b")
	putBroker(a, "c", "10.0.0.3:1", time.Time{})
	want := []string{"a=10.0.0.9:1", "c=10.0.0.3:1"}
	if got := restored(t, dir); !slices.Equal(got, want) {
		t.Fatalf("restores %v, want %v", got, want)
	}
	// A restart (no shutdown: kill -9) brings them back and folds the log.
	b := leaseAgent(t, dir)
	if got := b.table.LocalRecords(""); len(got) != 2 {
		t.Fatalf("restarted table holds %v", got)
	}
	if es, _, err := wal.Read(filepath.Join(dir, leaseLogFile), 0, wal.Options{}); err != nil || len(es) != 0 {
		t.Fatalf("log after the restart's snapshot: %d entries, %v", len(es), err)
	}
	if got := restored(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after the restart restores %v, want %v", got, want)
	}
}

// A refresh that changes nothing is not written; a mere deadline refresh
// waits for the saver.
func TestLeaseLogSkipsUnchangedRecords(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	size := a.leases.log.Size()
	putBroker(a, "b", "10.0.0.2:1", time.Time{}) // moves our seq
	grown := a.leases.log.Size()
	a.leases.PutLease(Lease{Door: "test", ID: "a", Keys: []string{"broker/a/0"}})
	if a.leases.log.Size() != grown || grown == size {
		t.Fatalf("log %d -> %d -> %d bytes: an unchanged lease was written again", size, grown, a.leases.log.Size())
	}
}

// A process dying mid-append leaves a torn frame: the replay keeps what is
// before it and the next append goes where it began.
func TestLeaseLogIgnoresTornTail(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	path := filepath.Join(dir, leaseLogFile)
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()-3); err != nil {
		t.Fatal(err)
	}
	if got := restored(t, dir); !slices.Equal(got, []string{"a=10.0.0.1:1"}) {
		t.Fatalf("restores %v from a torn log", got)
	}
	b := leaseAgent(t, dir)
	putBroker(b, "c", "10.0.0.3:1", time.Time{})
	if got := restored(t, dir); !slices.Equal(got, []string{"a=10.0.0.1:1", "c=10.0.0.3:1"}) {
		t.Fatalf("restores %v after appending past a torn log", got)
	}
}

// A crash between writing the snapshot and emptying the log leaves
// entries the snapshot already holds: replaying them must not bring back
// what was dropped after them.
func TestLeaseLogSkipsEntriesInTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	dropBroker(a, "b")
	path := filepath.Join(dir, leaseLogFile)
	old, err := os.ReadFile(path)
	if err != nil || len(old) == 0 {
		t.Fatalf("log: %d bytes, %v", len(old), err)
	}
	a.leases.saveMu.Lock()
	a.leases.compactLeases()
	a.leases.saveMu.Unlock()
	if err := os.WriteFile(path, old, 0o600); err != nil { // the truncate never happened
		t.Fatal(err)
	}
	if got := restored(t, dir); !slices.Equal(got, []string{"a=10.0.0.1:1"}) {
		t.Fatalf("restores %v", got)
	}
}

// The log is folded into the snapshot once it outgrows it, so neither
// grows without bound under churn.
func TestLeaseLogCompacts(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	for i := range 12000 {
		putBroker(a, fmt.Sprintf("b%d", i%10), fmt.Sprintf("10.0.%d.%d:1", i/250%250, i%250), time.Time{})
	}
	if a.leases.log.Size() > minCompact+4096 {
		t.Fatalf("log is %d bytes after 12,000 changes of 10 leases", a.leases.log.Size())
	}
	if got := restored(t, dir); len(got) != 10 {
		t.Fatalf("restores %d brokers, want 10", len(got))
	}
}

// After the host restarted, the processes whose leases have a deadline
// are gone with it: not restored. One without (an HTTP registration
// without TTL, until withdrawn) is.
func TestLeasesFromAnotherBootAreNotRestored(t *testing.T) {
	if bootID() == "" {
		t.Skip("the kernel does not say its boot id")
	}
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "session", "10.0.0.1:1", time.Now().Add(time.Hour))
	putBroker(a, "static", "10.0.0.2:1", time.Time{})
	a.leases.Freeze(false)
	path := filepath.Join(dir, leasesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(replaceOnce(t, string(b), `"boot":"`+bootID()+`"`, `"boot":"00000000-0000-0000-0000-000000000000"`))
	b = sealed.Seal(append([]byte("{"), b[len(`{"crc32c":"12345678",`):]...)) // as that boot would have sealed it
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c := leaseAgent(t, dir)
	var got []string
	for _, r := range c.table.LocalRecords("") {
		got = append(got, r.Broker.Name)
	}
	if !slices.Equal(got, []string{"static"}) {
		t.Fatalf("after a reboot the table holds %v, want only the lease without deadline", got)
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not in %s", old, s)
	}
	return strings.Replace(s, old, new, 1)
}
