package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A rule write whose fsync failed was refused to its client and never
// applied, but its line stayed in rules.log (and a compaction copied it
// on), so a kill -9 before the next snapshot replayed it: a write
// answered "not made" came back after the restart.
func TestRefusedEntryIsNotReplayed(t *testing.T) {
	path := filepath.Join(t.TempDir(), rulesLogFile)
	l, err := openAppendLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append([]byte(`"a"`)); err != nil {
		t.Fatal(err)
	}
	saved := syncFile
	syncFile = func(*os.File) error { return errors.New("injected: fsync failed") }
	err = l.Append([]byte(`"b"`))
	syncFile = saved
	if err == nil {
		t.Fatal("a write whose fsync failed was acknowledged")
	}
	if err := l.Append([]byte(`"c"`)); err == nil {
		t.Fatal("the log took an entry after a failed fsync, before a compaction")
	}
	logged := func() []string {
		entries, damaged, err := readLog(path)
		if err != nil || damaged != 0 {
			t.Fatalf("reading the log: %d damaged, %v", damaged, err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, string(e))
		}
		return got
	}
	if got := logged(); !slices.Equal(got, []string{`"a"`}) {
		t.Fatalf("after the refused writes the log replays %q, want only the acknowledged \"a\"", got)
	}
	if err := l.Compact(l.mark()); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte(`"d"`)); err != nil {
		t.Fatalf("an entry after the compaction: %v", err)
	}
	// The compaction leaves what a snapshot just written does not cover.
	if got := logged(); !slices.Equal(got, []string{`"d"`}) {
		t.Fatalf("after the compaction the log replays %q, want \"d\"", got)
	}
}
