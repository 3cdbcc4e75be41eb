package lease

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

func znode(path string) routes.Record {
	return routes.Record{Znode: &routes.Znode{Path: path, Data: []byte("x")}}
}

// writeApplied is a door's write: saved, then applied to the table.
func writeApplied(t *testing.T, a *testAgent, ws ...Write) {
	t.Helper()
	sv, err := a.leases.Write(ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		a.table.ApplyLocal(w.Puts, w.Deletes)
	}
	if err := sv.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A Write names only what changes: the keys of its puts join the lease,
// its deletes leave it, and the rest of the lease stays as it was; what
// the lease covers is found through the index, with or without a data dir.
func TestWriteChangesOnlyWhatItNames(t *testing.T) {
	for _, dir := range []string{"", "dir"} {
		t.Run("dir="+dir, func(t *testing.T) {
			if dir != "" {
				dir = t.TempDir()
			}
			a := leaseAgent(t, dir)
			id := Lease{Door: "zookeeper", ID: "s1", State: []byte(`{"id":1}`)}
			var keys []string
			for i := range 5 {
				r := znode(fmt.Sprintf("/a/n%d", i))
				keys = append(keys, r.Key())
				writeApplied(t, a, Write{Lease: id, Puts: []routes.Record{r}})
			}
			other := Lease{Door: "http", ID: "h", Prefixes: []string{znode("/a/n1").Key() + "/"}}
			writeApplied(t, a, Write{Lease: other})
			id.State = nil // kept
			writeApplied(t, a, Write{Lease: id, Deletes: []string{keys[1], keys[3]}})
			want := []string{keys[0], keys[2], keys[4]}
			ls := a.leases.Leases()
			i := slices.IndexFunc(ls, func(l Lease) bool { return l.ID == "s1" })
			if i < 0 || !slices.Equal(ls[i].Keys, want) || string(ls[i].State) != `{"id":1}` {
				t.Fatalf("lease after the writes: %+v, want keys %q and the state kept", ls, want)
			}
			for j, k := range keys {
				held := !slices.Contains([]string{keys[1], keys[3]}, k)
				if got := a.leases.HeldByOtherDoor(k, "http"); got != held {
					t.Errorf("key %d held by the session: %v, want %v", j, got, held)
				}
			}
			if got := a.leases.DoorsHolding(znode("/a/n1").Key()+"/c", nil); !slices.Equal(got, []string{"http"}) {
				t.Errorf("doors holding a key under the http lease's prefix: %q", got)
			}
			if dir != "" {
				b := leaseAgent(t, dir)
				if got := b.table.LocalRecords(znode("/a").Key()); len(got) != 3 {
					t.Errorf("a restart restored %d records, want 3: %v", len(got), got)
				}
			}
			refreshed := id
			refreshed.Deadline = time.Now().Add(time.Hour).Round(0)
			writeApplied(t, a, Write{Lease: refreshed})
			ls = a.leases.Leases()
			i = slices.IndexFunc(ls, func(l Lease) bool { return l.ID == "s1" })
			if !ls[i].Deadline.Equal(refreshed.Deadline) || !slices.Equal(ls[i].Keys, want) {
				t.Errorf("after a refresh: %+v, want deadline %v and the keys kept", ls[i], refreshed.Deadline)
			}
			writeApplied(t, a, Write{Lease: id, Deletes: want, Drop: true})
			if got := a.leases.DoorsHolding(keys[0], nil); len(got) != 0 {
				t.Errorf("a dropped lease still holds %q", got)
			}
		})
	}
}

// BenchmarkWriteOneOfMany is one key added to and removed from a lease
// that holds n already, in memory: it costs the same whatever n is.
func BenchmarkWriteOneOfMany(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a := leaseAgent(b, "")
			id := Lease{Door: "zookeeper", ID: "s1"}
			for i := range n {
				a.leases.Write([]Write{{Lease: id, Puts: []routes.Record{znode(fmt.Sprintf("/a/n%d", i))}}}, nil)
			}
			r := znode("/a/new")
			put := []Write{{Lease: id, Puts: []routes.Record{r}}}
			del := []Write{{Lease: id, Deletes: []string{r.Key()}}}
			b.ResetTimer()
			for range b.N {
				a.leases.Write(put, nil)
				a.leases.Write(del, nil)
			}
		})
	}
}

// Uncovered is what writing a lease frees: keys it covers now and will
// not, that no other lease covers and the table holds.
func TestUncovered(t *testing.T) {
	a := leaseAgent(t, "")
	x, y, z := znode("/u/x"), znode("/u/y"), znode("/u/z")
	writeApplied(t, a, Write{Lease: Lease{Door: "nacos", ID: "c1"}, Puts: []routes.Record{x, y, z}})
	writeApplied(t, a, Write{Lease: Lease{Door: "http", ID: "h"}, Puts: []routes.Record{y}})
	got := a.leases.Uncovered(Lease{Door: "nacos", ID: "c1", Keys: []string{z.Key()}})
	if !slices.Equal(got, []string{x.Key()}) {
		t.Fatalf("uncovered %q, want only %q (y is held by another lease, z stays covered)", got, x.Key())
	}
	if got := a.leases.Uncovered(Lease{Door: "nacos", ID: "c1", Prefixes: []string{znode("/u").Key() + "/"}}); len(got) != 0 {
		t.Fatalf("uncovered under a prefix covering them all: %q", got)
	}
}
