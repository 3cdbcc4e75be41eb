package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// Every file the agent replaces in its data dir (rules.json, a compacted
// rules.log, keyring.json, the incarnation) is there, rename and all,
// once writeFileAtomic returns: the directory is fsynced after the rename
// (without it a host crash may lose the rename). Before, only the file
// was fsynced.
func TestWriteFileAtomicSyncsTheDirectoryAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, rulesFile)
	var synced []string
	real := syncDir
	syncDir = func(d string) error {
		b, _ := os.ReadFile(path)
		synced = append(synced, d+" holding "+string(b))
		return real(d)
	}
	t.Cleanup(func() { syncDir = real })
	if err := writeFileAtomic(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if want := dir + " holding new"; len(synced) != 1 || synced[0] != want {
		t.Fatalf("directory syncs %q, want one of %q after the rename", synced, want)
	}
}
