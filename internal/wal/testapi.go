package wal

import (
	"os"
	"sync/atomic"
)

// The test API: a store's tests play a failing disk through the log
// itself, the one seam for it (nothing else in the data dir's code
// replaces a system call).

// faults are the failures a test injected (testapi.go).
type faults struct {
	write atomic.Pointer[error]
	sync  atomic.Pointer[error]
}

// FailWrites makes every later write of l fail with err, as a full disk
// does, until heal is called.
func (l *Log) FailWrites(err error) (heal func()) {
	l.faults.write.Store(&err)
	return func() { l.faults.write.Store(nil) }
}

// FailSyncs makes every later fsync of l fail with err, as a failing
// disk does, until heal is called.
func (l *Log) FailSyncs(err error) (heal func()) {
	l.faults.sync.Store(&err)
	return func() { l.faults.sync.Store(nil) }
}

// writeAt is f.WriteAt unless a test made writes fail. l.mu held.
func (l *Log) writeAt(b []byte, off int64) (int, error) {
	if err := l.faults.write.Load(); err != nil {
		return 0, *err
	}
	return l.f.WriteAt(b, off)
}

// sync is f.Sync unless a test made fsyncs fail.
func (l *Log) sync(f *os.File) error {
	if err := l.faults.sync.Load(); err != nil {
		return *err
	}
	return f.Sync()
}
