package lease

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// A restored lease loses to what the cluster saw of this agent after the
// files were written: the log's last entries (a withdrawal, a change) are
// lost whole, and a peer holds the withdrawal's tombstone and the changed
// record at later seqs of the run that wrote them. A restart that dies
// before settling keeps, in the snapshot it wrote, where the restored
// leases were written from, so the next start still finds them older.
// Before Settle existed, b came back, and c with its old address.
func TestSettleDropsWhatTheClusterSawLater(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	putBroker(a, "b", "10.0.0.2:1", time.Time{})
	putBroker(a, "c", "10.0.0.3:1", time.Time{})
	logPath := filepath.Join(dir, leaseLogFile)
	written, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	dropBroker(a, "b")
	putBroker(a, "c", "10.0.0.3:2", time.Time{})
	snap, _ := a.table.Snapshot(a.table.Local())
	peer := routes.Remembered{Inc: snap.Inc, Seq: snap.Seq, Ops: snap.Ops}
	a.leases.log.Close()
	// The disk lost the last two entries, whole.
	if err := os.WriteFile(logPath, written, 0o600); err != nil {
		t.Fatal(err)
	}
	if n := countFrames(written); n != 3 {
		t.Fatalf("the log held %d entries before the lost ones, want 3", n)
	}

	dies := leaseAgent(t, dir) // restarts, snapshots, dies before settling
	dies.leases.log.Close()
	b := leaseAgent(t, dir)
	d := b.leases.Settle([]routes.Remembered{peer})
	var ids []string
	for _, l := range b.leases.RestoredLeases("test") {
		ids = append(ids, l.ID)
	}
	if !slices.Equal(ids, []string{"a"}) {
		t.Errorf("restored leases %v, want [a]", ids)
	}
	var gone []string
	for _, op := range d.Ops {
		if op.Rec == nil {
			gone = append(gone, op.Key)
		}
	}
	if len(gone) != 2 {
		t.Errorf("withdrew %v, want b's and c's records", gone)
	}
	if _, ok := b.table.LocalRecord(routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "b"}}.Key()); ok {
		t.Errorf("b is still held")
	}
	if got := restored(t, dir); !slices.Equal(got, []string{"a=10.0.0.1:1"}) {
		t.Errorf("the files restore %v after settling, want [a=10.0.0.1:1]", got)
	}
}

// An agent that has nobody to ask restores what its files hold.
func TestSettleWithoutPeersRestoresAll(t *testing.T) {
	dir := t.TempDir()
	a := leaseAgent(t, dir)
	putBroker(a, "a", "10.0.0.1:1", time.Time{})
	a.leases.log.Close()
	b := leaseAgent(t, dir)
	if d := b.leases.Settle(nil); len(d.Ops) != 0 {
		t.Errorf("settling alone withdrew %v", d.Ops)
	}
	if got := b.leases.RestoredLeases("test"); len(got) != 1 {
		t.Errorf("restored %v", got)
	}
}

func countFrames(b []byte) int { return len(entryOffsets(b)) }

// entryOffsets is where each entry of a log (package wal: frames of
// 4-byte length, 4-byte CRC, 8-byte seq, payload) begins, leaving out
// its marks (frames without payload).
func entryOffsets(b []byte) []int {
	var out []int
	for off := 0; off+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n > 8 {
			out = append(out, off)
		}
		off += 8 + n
	}
	return out
}
