// Package atomicfile replaces a file whole, durably: the one way the
// agent's data dir (rules.json, a compacted rules.log, keyring.json, the
// incarnation, members.json, leases.json) and the client's registry cache
// file swap in a file's new content.
//
// Write writes the data to a temporary file beside the target (so the
// rename stays within one directory and one file system), fsyncs it,
// renames it over the target, then fsyncs the directory: the rename is a
// change of the directory, which the file's own fsync does not cover.
// So a crash of the process or of the host leaves the old file or the
// new one, whole, never half of one, and once Write has returned the new
// one is there even through a host crash.
//
// Any failure before the rename (a full disk failing the write or the
// fsync, say) removes the temporary file and leaves the old file as it
// was, and Write returns the error. A failure of the directory's fsync
// is returned too, but the rename has happened by then: the new file is
// at the path (a caller holding the old one open must not keep writing
// to it) and only its survival of a host crash is uncertain. A process
// killed between the write and the rename leaves its temporary file
// (path.tmpNNN) behind; callers that own the directory remove such
// files at start.
//
// A file found damaged is set aside rather than overwritten or deleted
// (SetAside, or CopyAside for one that stays in use), under a name no
// earlier set-aside copy has, so every restart's evidence is kept.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, as the package doc says: a
// crash leaves the old file or the new one, and once Write returns nil
// the new one is on disk, rename and all.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs directory dir, making the renames and new files in it
// durable. A variable so tests (here and in the packages that use Write)
// can see it called or make it fail as a failing disk does; a test that
// sets it must not run in parallel with one that writes.
var SyncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
