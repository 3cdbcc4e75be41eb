package agent

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
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
	saved := syncDir
	syncDir = func(string) error { return errors.New("injected: directory fsync failed") }
	err = l.Compact(l.mark())
	syncDir = saved
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
