package agent

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/namecast/namecast/internal/atomicfile"
)

// A compaction whose rename went through but whose directory fsync then
// failed leaves the log writing to the file now at its path. Before, it
// kept the old file open: unlinked by the rename, every entry written
// after it (each acknowledged) was gone at the next restart.
func TestCompactionThatFailsAfterTheRenameKeepsWritingTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), rulesLogFile)
	l, err := openAppendLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append([]byte(`"a"`)); err != nil {
		t.Fatal(err)
	}
	saved := atomicfile.SyncDir
	atomicfile.SyncDir = func(string) error { return errors.New("injected: directory fsync failed") }
	err = l.Compact(l.mark())
	atomicfile.SyncDir = saved
	if err == nil {
		t.Fatal("the failed directory fsync is not reported")
	}
	if err := l.Append([]byte(`"b"`)); err != nil {
		t.Fatalf("an entry after the failed compaction: %v", err)
	}
	entries, _, err := readLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !bytes.Equal(entries[0], []byte(`"b"`)) {
		t.Fatalf("a restart reads %q from the log, want the entry acknowledged after the compaction", entries)
	}
}

// An entry in flight (written, not yet applied) while the log is
// compacted is kept by that compaction, and released once done: the next
// compaction cuts it like any other. Before, an in-flight entry was known
// by its offset, which the compaction moved while the writer still held
// the old one: its done never found it, the moved offset stayed in flight
// for good, and every later compaction kept the whole log from there
// (until a restart).
func TestCompactionCutsEntriesThatWereInFlightDuringAnEarlierOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), rulesLogFile)
	l, err := openAppendLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append([]byte(`"a"`)); err != nil {
		t.Fatal(err)
	}
	seq, err := l.write([]byte(`"b"`))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(l.mark()); err != nil {
		t.Fatal(err)
	}
	if entries, _, _ := readLog(path); len(entries) != 1 || string(entries[0]) != `"b"` {
		t.Fatalf("the compaction kept %q, want the entry in flight", entries)
	}
	if err := l.wait(seq); err != nil {
		t.Fatal(err)
	}
	l.done(seq)
	for _, p := range []string{`"c"`, `"d"`} {
		if err := l.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Compact(l.mark()); err != nil {
		t.Fatal(err)
	}
	if entries, _, _ := readLog(path); len(entries) != 0 {
		t.Fatalf("a compaction with nothing in flight kept %q: an entry in flight during the previous one still holds it back", entries)
	}
}
