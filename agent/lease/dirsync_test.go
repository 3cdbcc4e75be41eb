package lease

import (
	"os"
	"path/filepath"
	"testing"
)

// A snapshot is on disk, rename and all, once replaceFile returns: the
// directory is fsynced after the rename (without it a host crash may
// lose the rename, leaving the old snapshot beside a log already emptied
// into the new one). Before, only the file was fsynced.
func TestReplaceFileSyncsTheDirectoryAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, leasesFile)
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var synced []string
	real := syncDir
	syncDir = func(d string) error {
		b, _ := os.ReadFile(path)
		synced = append(synced, d+" holding "+string(b))
		return real(d)
	}
	t.Cleanup(func() { syncDir = real })
	if err := replaceFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if want := dir + " holding new"; len(synced) != 1 || synced[0] != want {
		t.Fatalf("directory syncs %q, want one of %q after the rename", synced, want)
	}
}
