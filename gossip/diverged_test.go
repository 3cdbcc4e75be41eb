package gossip

import (
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// A replica that holds an origin at the origin's own seq but with other
// records (the digest's hash differs) pulls the origin's snapshot and
// ends holding exactly the origin's records, whatever made it differ: here
// a tombstone and another op of one key at seqs the origin used for other
// keys, which per key look newer than the origin's ops and which no later
// op of the origin replaces.
func TestReplicaAtSameSeqWithOtherRecordsIsRepaired(t *testing.T) {
	gs := startLoopback(t, 3, nil)
	origin, replica := gs[0], gs[1]
	rec := func(i int) routes.Record {
		return routes.Record{URL: &routes.URL{Interface: "com.x.Svc", Category: "providers",
			URL: fmt.Sprintf("dubbo://10.0.0.%d:20880/com.x.Svc", i)}}
	}
	for i := 1; i <= 20; i++ {
		d, _ := origin.table.ApplyLocal([]routes.Record{rec(i)}, nil)
		origin.Publish(d)
	}
	want := func() routes.DigestEntry { e, _ := origin.table.Entry(origin.name); return e }
	testutil.Eventually(t, 20*time.Second, func() error {
		for _, g := range gs[1:] {
			if got, _ := g.table.Entry(origin.name); got != want() {
				return fmt.Errorf("%s holds %+v of the origin, want %+v", g.name, got, want())
			}
		}
		return nil
	})

	// Planted as remote ops at seqs at or below the origin's: a
	// tombstone over a live key, and key 2 at seq 19 with other content.
	e := want()
	other := rec(2)
	other.URL.Data = "10.9.9.9"
	// (A pull already in flight may settle it at once: only the plant's
	// taking is checked here, the digest in routes' own test.)
	if res := replica.table.Apply(routes.Delta{Origin: origin.name, Inc: e.Inc, Ops: []routes.Op{
		{Key: rec(1).Key(), Seq: e.Seq - 2},
		{Key: rec(2).Key(), Seq: e.Seq - 1, Rec: &other},
	}}); res.Applied != 2 {
		t.Fatalf("planting applied %+v, want 2 ops", res)
	}
	testutil.Eventually(t, 30*time.Second, func() error {
		if got, _ := replica.table.Entry(origin.name); got != want() {
			return fmt.Errorf("the replica holds %+v of the origin, want %+v", got, want())
		}
		return nil
	})
	if got := len(replica.table.URLs("com.x.Svc", "providers")); got != 20 {
		t.Fatalf("the replica serves %d of the origin's 20 URLs", got)
	}
	if got, _ := replica.table.Entry(origin.name); got != want() {
		t.Fatalf("the replica holds %+v of the origin, want %+v", got, want())
	}
}
