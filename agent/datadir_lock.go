package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockFile is held (flock, exclusive) by the one agent using a data dir,
// from the start of Start to the end of Shutdown. Two agents on one dir
// would overwrite each other's leases log, incarnation, keyring and rules;
// the second refuses instead. The kernel drops the lock when its holder
// dies (kill -9 included), so a stale file never blocks a restart. The
// file says who holds it, for the refusal's message.
const lockFile = "LOCK"

// dirLock is a held data-dir lock.
type dirLock struct{ f *os.File }

// lockDataDir takes the lock of data dir dir ("": none) for node, or says who
// holds it.
func lockDataDir(dir, node string) (*dirLock, error) {
	if dir == "" {
		return nil, nil
	}
	// The lock is the data dir's first use: a path that is not a
	// directory this agent can write fails here, named with its flag.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w (give a directory this agent can write)", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w (give a directory this agent can write)", dir, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	if !held {
		b, _ := os.ReadFile(path)
		f.Close()
		holder := strings.TrimSpace(string(b))
		if holder == "" {
			holder = "another process (it has not yet written its name)"
		}
		return nil, fmt.Errorf("data dir %s is in use by %s: one data dir serves one agent; stop that agent or give this one its own --data-dir", dir, holder)
	}
	who := "pid " + strconv.Itoa(os.Getpid()) + " node " + node + "\n"
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(who), 0)
	}
	return &dirLock{f: f}, nil
}

// release lets the next agent have the dir. Closing the file drops the
// flock; the file itself stays (removing it would race a new holder).
func (l *dirLock) release() {
	if l != nil {
		l.f.Close()
	}
}
