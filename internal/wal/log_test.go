package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/namecast/namecast/internal/atomicfile"
)

var quiet = Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

func open(t *testing.T, path string, after uint64) (*Log, []Entry, Damage) {
	t.Helper()
	l, es, dmg, err := Open(path, after, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, es, dmg
}

func payloads(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Payload))
	}
	return out
}

func read(t *testing.T, path string, after uint64) ([]string, Damage) {
	t.Helper()
	es, dmg, err := Read(path, after, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return payloads(es), dmg
}

func appendAll(t *testing.T, l *Log, ps ...string) {
	t.Helper()
	for _, p := range ps {
		if _, err := l.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEntriesComeBackInOrderAfterReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, es, _ := open(t, path, 0)
	if len(es) != 0 {
		t.Fatalf("a new log holds %q", payloads(es))
	}
	appendAll(t, l, "a", "b", "c")
	l.Close()
	l, es, dmg := open(t, path, 0)
	if got := payloads(es); !slices.Equal(got, []string{"a", "b", "c"}) || dmg.Any() {
		t.Fatalf("reopened: %q, damage %+v", got, dmg)
	}
	if seq, _ := l.Append([]byte("d")); seq != 4 {
		t.Fatalf("the next entry is numbered %d, want 4", seq)
	}
	if _, es, _ := open(t, path, 2); !slices.Equal(payloads(es), []string{"c", "d"}) {
		t.Fatalf("after 2: %q", payloads(es))
	}
}

// Writers that wait at once share one fsync, and each is answered only
// once its own entry is covered.
func TestWritersWaitingAtOnceShareAnFsync(t *testing.T) {
	l, _, _ := open(t, filepath.Join(t.TempDir(), "x.log"), 0)
	const n = 16
	seqs := make([]uint64, n)
	for i := range seqs {
		var err error
		if seqs[i], err = l.Write([]byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, s := range seqs {
		wg.Go(func() {
			if err := l.Wait(s); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if s := l.Syncs(); s < 1 || s > 2 {
		t.Fatalf("%d writers written before any waited ran %d fsyncs, want 1 (2 if one finished first)", n, s)
	}
}

// A torn tail (the process died mid-write) is cut off at Open, so the
// next entry does not land behind it; the entries before it stay.
func TestTornTailIsCutOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "a", "b")
	l.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0, 0, 0, 40, 1, 2, 3, 4, 0, 0}) // a frame promising more than follows
	f.Close()
	l, es, dmg := open(t, path, 0)
	if !slices.Equal(payloads(es), []string{"a", "b"}) || dmg.Torn != 10 || dmg.Stretches != 0 || dmg.Lost != 0 {
		t.Fatalf("read %q, damage %+v; want a, b and a torn tail of 10 bytes", payloads(es), dmg)
	}
	appendAll(t, l, "c")
	if got, dmg := read(t, path, 0); !slices.Equal(got, []string{"a", "b", "c"}) || dmg.Any() {
		t.Fatalf("after the cut: %q, %+v", got, dmg)
	}
}

// Damage mid-log skips only what is damaged, and says which entry it
// destroyed; a last entry lost whole leaves nothing to see.
func TestDamageMidLogIsSkippedAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "aaaa", "bbbb", "cccc", "dddd")
	l.Close()
	b, _ := os.ReadFile(path)
	frame := len(b) / 4
	whole := slices.Clone(b)
	b[frame+frame/2] ^= 0xff // inside "bbbb"'s frame
	os.WriteFile(path, b, 0o600)
	got, dmg := read(t, path, 0)
	if !slices.Equal(got, []string{"aaaa", "cccc", "dddd"}) || dmg.Stretches != 1 || dmg.Lost != 2 || dmg.Torn != 0 {
		t.Fatalf("read %q, damage %+v; want aaaa, cccc, dddd, one stretch, entry 2 lost", got, dmg)
	}
	os.WriteFile(path, whole[:3*frame], 0o600) // the last entry lost whole
	if got, dmg := read(t, path, 0); !slices.Equal(got, []string{"aaaa", "bbbb", "cccc"}) || dmg.Any() {
		t.Fatalf("read %q, damage %+v after losing the last entry whole", got, dmg)
	}
}

// A write the disk refuses is cut off and refused; the log goes on.
func TestFailedWriteIsRefusedAndTheLogGoesOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "a")
	heal := l.FailWrites(errors.New("no space left on device"))
	if _, err := l.Append([]byte("b")); err == nil {
		t.Fatal("a write the disk refused was acknowledged")
	}
	heal()
	appendAll(t, l, "c")
	if got, dmg := read(t, path, 0); !slices.Equal(got, []string{"a", "c"}) || dmg.Any() {
		t.Fatalf("read %q, %+v", got, dmg)
	}
}

// A failed fsync refuses the entries it did not cover (cut off, so a
// restart does not replay them), and the log refuses every later entry
// until a compaction; a writer whose entry a snapshot then holds is
// answered that it is on disk.
func TestFailedFsyncPoisonsTheLogUntilCompaction(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "a")
	heal := l.FailSyncs(errors.New("input/output error"))
	b, err := l.Write([]byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(b); err == nil {
		t.Fatal("a write whose fsync failed was acknowledged")
	}
	heal()
	if _, err := l.Append([]byte("c")); err == nil || l.Err() == nil {
		t.Fatal("the log took an entry after a failed fsync, before a compaction")
	}
	if got, _ := read(t, path, 0); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after the refused writes the log replays %q, want only the acknowledged a", got)
	}
	if err := l.Wait(b); err == nil {
		t.Fatal("asked again, the refused entry is on disk")
	}
	// A compaction whose snapshot does not hold b (b is kept from).
	if err := l.Compact(filepath.Join(dir, "snap"), []byte("a"), b); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(b); err == nil {
		t.Fatal("a refused entry no snapshot holds is on disk after a compaction")
	}
	d, err := l.Append([]byte("d"))
	if err != nil {
		t.Fatalf("an entry after the compaction: %v", err)
	}
	if got, dmg := read(t, path, 0); !slices.Equal(got, []string{"d"}) || dmg.Any() {
		t.Fatalf("after the compaction the log replays %q (%+v), want d and no damage", got, dmg)
	}
	// A snapshot that holds everything answers a refused writer.
	heal = l.FailSyncs(errors.New("input/output error"))
	e, _ := l.Write([]byte("e"))
	if err := l.Wait(e); err == nil {
		t.Fatal("a write whose fsync failed was acknowledged")
	}
	heal()
	if err := l.Compact(filepath.Join(dir, "snap"), []byte("a d e"), l.Last()+1); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(e); err != nil {
		t.Fatalf("the snapshot holds the entry, yet Wait says %v", err)
	}
	if err := l.Wait(d); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, path, 0); len(got) != 0 {
		t.Fatalf("a compaction keeping nothing left %q", got)
	}
	appendAll(t, l, "f")
	l.Close()
	_, es, dmg := open(t, path, 0)
	if len(es) != 1 || es[0].Seq != e+1 || dmg.Any() {
		t.Fatalf("reopened: %+v %+v; want f numbered %d after the mark", es, dmg, e+1)
	}
}

// Poison refuses entries until a compaction, as a failed fsync does.
func TestPoisonRefusesUntilCompaction(t *testing.T) {
	dir := t.TempDir()
	l, _, _ := open(t, filepath.Join(dir, "x.log"), 0)
	l.Poison(errors.New("a change could not be undone"))
	if _, err := l.Append([]byte("a")); err == nil {
		t.Fatal("a poisoned log took an entry")
	}
	if err := l.Compact(filepath.Join(dir, "snap"), []byte("{}"), 1); err != nil {
		t.Fatal(err)
	}
	appendAll(t, l, "a")
}

// A compaction keeps the entries from keepFrom on, the snapshot first: a
// crash after the snapshot leaves the old log, whose entries the snapshot
// holds.
func TestCompactionKeepsEntriesFromKeepFrom(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "a", "b")
	c, err := l.Write([]byte("c")) // in flight: its writer has not applied it
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(filepath.Join(dir, "snap"), []byte("ab"), c); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "snap")); string(b) != "ab" {
		t.Fatalf("snapshot %q", b)
	}
	if got, dmg := read(t, path, 0); !slices.Equal(got, []string{"c"}) || dmg.Any() {
		t.Fatalf("kept %q (%+v), want c", got, dmg)
	}
	if err := l.Wait(c); err != nil {
		t.Fatal(err)
	}
	appendAll(t, l, "d")
	if err := l.Compact(filepath.Join(dir, "snap"), []byte("abcd"), l.Last()+1); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(t, path, 0); len(got) != 0 {
		t.Fatalf("kept %q, want nothing", got)
	}
}

// A compaction whose rename went through but whose directory fsync then
// failed keeps writing to the file now at the path, not to the old one
// the rename unlinked (whose entries no restart would read).
func TestCompactionThatFailsAfterTheRenameKeepsWritingTheLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "a")
	if err := atomicfile.Write(filepath.Join(dir, "snap"), []byte("a")); err != nil {
		t.Fatal(err)
	}
	saved := atomicfile.SyncDir
	calls := 0
	atomicfile.SyncDir = func(d string) error {
		calls++
		if calls == 2 { // the log's rewrite, after the snapshot's
			return errors.New("injected: directory fsync failed")
		}
		return saved(d)
	}
	err := l.Compact(filepath.Join(dir, "snap"), []byte("a"), l.Last()+1)
	atomicfile.SyncDir = saved
	if err == nil {
		t.Fatal("the failed directory fsync is not reported")
	}
	appendAll(t, l, "b")
	if got, _ := read(t, path, 0); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("a restart reads %q, want the entry acknowledged after the compaction", got)
	}
}

// A failed snapshot leaves the log as it was.
func TestFailedSnapshotLeavesTheLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.log")
	l, _, _ := open(t, path, 0)
	appendAll(t, l, "a")
	if err := l.Compact(filepath.Join(dir, "no", "such", "dir"), []byte("a"), 2); err == nil {
		t.Fatal("a snapshot that could not be written is not reported")
	}
	if got, _ := read(t, path, 0); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after a failed snapshot the log holds %q", got)
	}
}

// The logs of release 0.1.0 (testdata, written by that release's code:
// the rules log's lines, the lease log's frames of JSON) are read, and
// rewritten once in this format with the same entries.
func TestOldFormatsAreReadAndRewrittenOnce(t *testing.T) {
	for _, c := range []struct {
		file  string
		after uint64
		want  []uint64
		first string
	}{
		{"rules-0.1.0.log", 0, []uint64{1, 2, 3}, `{"o":"~rules"`},
		{"leases-0.1.0.log", 2, []uint64{3, 4, 5}, `{"seq":3,"put"`},
	} {
		t.Run(c.file, func(t *testing.T) {
			old, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "x.log")
			os.WriteFile(path, old, 0o600)
			l, es, dmg := open(t, path, c.after)
			var seqs []uint64
			for _, e := range es {
				seqs = append(seqs, e.Seq)
			}
			if !slices.Equal(seqs, c.want) || dmg.Any() || !bytes.HasPrefix(es[0].Payload, []byte(c.first)) {
				t.Fatalf("read entries %v (%+v), first %q", seqs, dmg, es[0].Payload)
			}
			appendAll(t, l, `{"new":1}`)
			l.Close()
			b, _ := os.ReadFile(path)
			if _, _, _, _, format := readAny(b, 0, DefaultMaxEntry); format != "" {
				t.Fatalf("the log is still in the old format (%s)", format)
			}
			_, again, dmg := open(t, path, c.after)
			if len(again) != len(es)+1 || dmg.Any() || string(again[len(es)].Payload) != `{"new":1}` {
				t.Fatalf("reopened: %d entries (%+v)", len(again), dmg)
			}
			for i, e := range es {
				if again[i].Seq != e.Seq || !bytes.Equal(again[i].Payload, e.Payload) {
					t.Fatalf("entry %d rewritten as %d %q, was %d %q", i, again[i].Seq, again[i].Payload, e.Seq, e.Payload)
				}
			}
		})
	}
}

// Damage in an old lease log is judged as in this format.
func TestOldLeaseLogDamageIsReported(t *testing.T) {
	old, _ := os.ReadFile(filepath.Join("testdata", "leases-0.1.0.log"))
	n := 8 + int(old[3]) | int(old[2])<<8
	old[n+12] ^= 0xff // inside the second frame
	path := filepath.Join(t.TempDir(), "x.log")
	os.WriteFile(path, old, 0o600)
	es, dmg, err := Read(path, 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || dmg.Stretches != 1 || dmg.Lost != 4 {
		t.Fatalf("read %d entries, %+v; want 2, one stretch, entry 4 lost", len(es), dmg)
	}
}
