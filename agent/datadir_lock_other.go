//go:build !unix

package agent

import (
	"errors"
	"os"
)

// tryLock has no flock to use here: a data dir is refused rather than
// shared unguarded.
func tryLock(*os.File) (bool, error) {
	return false, errors.New("--data-dir needs flock(2), which this platform lacks")
}
