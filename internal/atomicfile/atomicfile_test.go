package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A file is on disk, rename and all, once Write returns: the directory is
// fsynced after the rename (without it a host crash may lose the rename,
// leaving, say, the old lease snapshot beside a log already emptied into
// the new one). Before, only the file was fsynced.
func TestWriteSyncsTheDirectoryAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var synced []string
	real := SyncDir
	SyncDir = func(d string) error {
		b, _ := os.ReadFile(path)
		synced = append(synced, d+" holding "+string(b))
		return real(d)
	}
	t.Cleanup(func() { SyncDir = real })
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if want := dir + " holding new"; len(synced) != 1 || synced[0] != want {
		t.Fatalf("directory syncs %q, want one of %q after the rename", synced, want)
	}
	assertOnly(t, dir, "rules.json")
}

// A failed directory fsync is reported, and the new file is at the path
// by then (the rename went through): a caller must not take the old file
// for the one at the path.
func TestWriteReportsAFailedDirectorySyncAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keyring.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	real := SyncDir
	SyncDir = func(string) error { return errors.New("injected: directory fsync failed") }
	t.Cleanup(func() { SyncDir = real })
	if err := Write(path, []byte("new")); err == nil {
		t.Fatal("a failed directory fsync is not reported")
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("the path holds %q after the rename, want the new file", b)
	}
	assertOnly(t, dir, "keyring.json")
}

// assertOnly fails unless dir holds exactly the file name (no temporary
// file left behind).
func assertOnly(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the directory holds %q, want only %q", names, name)
	}
}
