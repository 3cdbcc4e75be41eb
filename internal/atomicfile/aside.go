package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// SetAside renames a damaged file out of the way under a name no earlier
// set-aside copy has (path.corrupt, then path.corrupt.1, .2, ...), so a
// later restart never overwrites the evidence of an earlier one. It
// returns the new name, or "" and the error when nothing was set aside.
func SetAside(path string) (string, error) {
	for i := 0; ; i++ {
		dst := asideName(path, i)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(path, dst); err != nil {
			return "", err
		}
		return dst, nil
	}
}

// CopyAside is SetAside for a file that stays in use: a copy, synced,
// under the first of those names that no file has.
func CopyAside(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		dst := asideName(path, i)
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(b)
		if err := errors.Join(err, f.Sync(), f.Close()); err != nil {
			return "", err
		}
		return dst, nil
	}
}

func asideName(path string, i int) string {
	if i == 0 {
		return path + ".corrupt"
	}
	return path + ".corrupt." + strconv.Itoa(i)
}
