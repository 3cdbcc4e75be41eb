package gossip

import (
	"flag"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

var bigRecords = flag.Int("gossip.records", 0, "records on one agent for TestLargeOriginSyncs (0: 3000, with 32 KiB snapshot parts)")

// One origin's snapshot used to be one user message, and memberlist
// refuses messages over 20 MiB: an agent holding more (2 brokers × 100k
// topics) could never be synced. Snapshots now go in parts of at most
// maxSnapshotBytes. CI syncs 3000 records in 32 KiB parts; the figure in
// the issue, 500k records (~55 MiB) in parts of maxSnapshotBytes, runs with
//
//	go test -run TestLargeOriginSyncs -gossip.records=500000 -v ./gossip/
func TestLargeOriginSyncs(t *testing.T) {
	n, timeout := *bigRecords, 30*time.Second
	if n == 0 {
		n = 3000
		// Restored after the agents stop (cleanups run last first).
		t.Cleanup(func(m int) func() { return func() { maxSnapshotBytes = m } }(maxSnapshotBytes))
		maxSnapshotBytes = 32 << 10
	} else {
		timeout = 10 * time.Minute
	}
	gs := startLoopback(t, 1, func(c *Config) { c.Memberlist.TCPTimeout = time.Minute })
	// Set before any peer can pull; read by the sending goroutine only.
	var largest atomic.Int64
	gs[0].sentReliable = func(msg []byte) {
		if (msg[0] == msgSnapshots || msg[0] == msgParts) && int64(len(msg)) > largest.Load() {
			largest.Store(int64(len(msg)))
		}
	}
	recs := make([]routes.Record, 0, n)
	for i := range n {
		recs = append(recs, routes.Record{Queue: &routes.Queue{Topic: fmt.Sprintf("topic-%07d", i),
			BrokerName: fmt.Sprintf("broker-%d", i%2), ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}})
	}
	gs[0].table.ApplyLocal(recs, nil)
	snap, _ := gs[0].table.Snapshot(gs[0].name)
	parts, _ := snap.Split(maxSnapshotBytes)
	t.Logf("%d records: %d bytes of ops encoded, in %d parts of at most %d bytes", n, len(encode(msgSnapshots, snap)), len(parts), maxSnapshotBytes)

	// A new agent joins: push/pull tells it what it lacks, and it pulls.
	start := time.Now()
	late := startLoopback(t, 1, func(c *Config) {
		c.Table = routes.NewTable("late", 1)
		c.Memberlist.TCPTimeout = time.Minute
	})[0]
	if _, err := late.Join([]string{gs[0].LocalAddr()}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, timeout, func() error {
		if _, got := late.table.Len(); got != n {
			return fmt.Errorf("the new agent holds %d of %d records", got, n)
		}
		return nil
	})
	if got, want := late.table.Digest()[gs[0].name], gs[0].table.Digest()[gs[0].name]; got != want {
		t.Fatalf("the new agent's digest entry %+v differs from the origin's %+v", got, want)
	}
	t.Logf("synced %d records in %v; the largest message was %d bytes", n, time.Since(start).Round(time.Millisecond), largest.Load())
	if l := largest.Load(); l > int64(maxSnapshotBytes+snapshotOverhead) {
		t.Fatalf("a snapshots message of %d bytes was sent, over the %d-byte part size", l, maxSnapshotBytes)
	}
}
