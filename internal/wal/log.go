package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"

	"github.com/namecast/namecast/internal/atomicfile"
)

// Options tune a Log; the zero Options are the defaults.
type Options struct {
	// MaxEntry bounds one entry's payload (DefaultMaxEntry if 0): a
	// larger one is refused by Write, and a frame claiming more is
	// damage when read.
	MaxEntry int
	// Logger says what Open repaired (a torn tail cut, an old format
	// rewritten); nil: slog's default.
	Logger *slog.Logger
	// KeepDamaged makes Open copy a log it found damaged aside
	// (atomicfile.CopyAside, named in Damage.Aside) before it repairs
	// anything, so the evidence outlives the repair.
	KeepDamaged bool
}

// Log is one log file open for appending (see the package doc).
type Log struct {
	path     string
	maxEntry int
	logger   *slog.Logger
	faults   faults

	mu      sync.Mutex
	cond    *sync.Cond
	f       *os.File
	size    int64  // bytes in the file
	last    uint64 // the last entry written
	synced  uint64 // every entry up to it is on disk, or refused
	covered uint64 // every entry up to it is held by a snapshot (Compact)
	// syncedSize is where the synced entries end: a failed fsync cuts
	// the file back to it.
	syncedSize int64
	syncing    bool
	syncs      uint64
	// refused are the entries a failed fsync did not cover, as ranges
	// [from, to]: their writers are told so, even once the log takes
	// entries again, unless a snapshot holds them (covered).
	refused [][2]uint64
	// poison, once set, refuses every Write until Compact.
	poison error
	buf    []byte
}

// Open reads the log at path (creating it if missing) and opens it for
// appending. It returns the entries numbered after after (those the
// caller's snapshot does not hold), in the order written, and what it
// found damaged. A torn tail is cut off (and logged); a file of an old
// format is rewritten in this one, with the same entries (and logged);
// when that rewrite fails the log refuses entries until Compact. Only an
// error reading or opening the file fails Open.
func Open(path string, after uint64, opts Options) (*Log, []Entry, Damage, error) {
	l := &Log{path: path, maxEntry: opts.MaxEntry, logger: opts.Logger}
	if l.maxEntry <= 0 {
		l.maxEntry = DefaultMaxEntry
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	l.cond = sync.NewCond(&l.mu)
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, Damage{}, err
	}
	entries, good, last, dmg, format := readAny(b, after, l.maxEntry)
	if opts.KeepDamaged && dmg.Any() {
		dmg.Aside, _ = atomicfile.CopyAside(path)
	}
	// Copies: b is not kept.
	for i := range entries {
		entries[i].Payload = append([]byte(nil), entries[i].Payload...)
	}
	l.last, l.synced, l.covered = last, last, after
	if format != "" {
		buf := appendFrame(nil, after, nil)
		for _, e := range entries {
			buf = appendFrame(buf, e.Seq, e.Payload)
		}
		if werr := atomicfile.Write(path, buf); werr != nil && !l.replacedBy(b) {
			l.poison = fmt.Errorf("%s is in the format of release 0.1.0 and could not be rewritten in this one (%v); no entries until it is", path, werr)
			l.logger.Error("rewriting a log of an earlier release failed; it refuses entries until a snapshot is written", "path", path, "err", werr)
		} else {
			l.logger.Info("rewrote a log of an earlier release in this release's format", "path", path, "format", string(format), "entries", len(entries))
		}
		if l.f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
			return nil, nil, Damage{}, err
		}
		st, err := l.f.Stat()
		if err != nil {
			l.f.Close()
			return nil, nil, Damage{}, err
		}
		l.size = st.Size()
		l.syncedSize = l.size
		return l, entries, dmg, nil
	}
	if l.f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, nil, Damage{}, err
	}
	if dmg.Torn > 0 {
		if err := l.f.Truncate(good); err != nil {
			l.f.Close()
			return nil, nil, Damage{}, err
		}
		l.logger.Warn("cut a torn tail off a log (the process died writing an entry, never acknowledged)", "path", path, "bytes", dmg.Torn)
	}
	l.size, l.syncedSize = good, good
	return l, entries, dmg, nil
}

// replacedBy says whether the file at l.path no longer holds old (a
// rename replaced it although syncing its directory then failed).
func (l *Log) replacedBy(old []byte) bool {
	b, err := os.ReadFile(l.path)
	return err == nil && string(b) != string(old)
}

// Read returns what Open would, without opening, repairing or rewriting
// anything (for a reader of another agent's data dir).
func Read(path string, after uint64, opts Options) ([]Entry, Damage, error) {
	maxEntry := opts.MaxEntry
	if maxEntry <= 0 {
		maxEntry = DefaultMaxEntry
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Damage{}, nil
	}
	if err != nil {
		return nil, Damage{}, err
	}
	entries, _, _, dmg, _ := readAny(b, after, maxEntry)
	return entries, dmg, nil
}

// Path is the file the log writes.
func (l *Log) Path() string { return l.path }

// Write appends an entry with payload p (not empty) and returns its
// number, without waiting for the disk (Wait does). An error means
// nothing was written: the entry is refused.
func (l *Log) Write(p []byte) (uint64, error) {
	if len(p) == 0 {
		return 0, fmt.Errorf("%s: an empty entry", l.path)
	}
	if len(p) > l.maxEntry {
		return 0, fmt.Errorf("an entry of %d bytes is over the %d-byte limit of one entry of %s", len(p), l.maxEntry, l.path)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.poison != nil {
		return 0, l.poison
	}
	l.buf = appendFrame(l.buf[:0], l.last+1, p)
	n, err := l.writeAt(l.buf, l.size)
	if err != nil {
		if n > 0 {
			// Half a frame would hide the entries after it: cut it.
			if terr := l.f.Truncate(l.size); terr != nil {
				l.poison = fmt.Errorf("%s: a failed write could not be cut off (%v); no more entries until it is rewritten", l.path, terr)
			}
		}
		return 0, fmt.Errorf("%s: %w", l.path, err)
	}
	if cap(l.buf) > 1<<20 {
		l.buf = nil // a big entry's buffer is not kept for the next small one
	}
	l.size += int64(n)
	l.last++
	return l.last, nil
}

// Wait returns once entry seq is on disk (or held by a snapshot, see
// Compact), running the fsync itself when none that covers it is under
// way. An error means it is not: the entry is refused, and its writer
// must not acknowledge it.
func (l *Log) Wait(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		switch {
		case seq <= l.covered:
			return nil
		case l.isRefused(seq):
			return fmt.Errorf("%s: an fsync failed before this entry was on disk, so it is not saved", l.path)
		case seq <= l.synced:
			return nil
		case l.poison != nil:
			return l.poison
		case l.syncing:
			l.cond.Wait()
			continue
		}
		l.syncing = true
		l.syncs++
		target, targetSize, f := l.last, l.size, l.f
		l.mu.Unlock()
		err := l.sync(f)
		l.mu.Lock()
		l.syncing = false
		if err == nil {
			l.synced = max(l.synced, target)
			l.syncedSize = max(l.syncedSize, targetSize)
		} else {
			l.failedSync(err)
		}
		l.cond.Broadcast()
	}
}

// failedSync poisons the log after a failed fsync and refuses the entries
// it did not cover, cutting them off the file. l.mu held.
func (l *Log) failedSync(err error) {
	l.poison = fmt.Errorf("%s: fsync failed (%v); no more entries until it is rewritten", l.path, err)
	if l.last > l.synced {
		l.refused = append(l.refused, [2]uint64{l.synced + 1, l.last})
		l.synced = l.last
	}
	if terr := l.f.Truncate(l.syncedSize); terr != nil {
		l.poison = fmt.Errorf("%s: fsync failed (%v) and the refused entries could not be cut off (%v); no more entries until it is rewritten", l.path, err, terr)
		return
	}
	l.size = l.syncedSize
}

func (l *Log) isRefused(seq uint64) bool {
	for _, r := range l.refused {
		if seq >= r[0] && seq <= r[1] {
			return true
		}
	}
	return false
}

// Append writes p and waits until it is on disk.
func (l *Log) Append(p []byte) (uint64, error) {
	seq, err := l.Write(p)
	if err != nil {
		return 0, err
	}
	return seq, l.Wait(seq)
}

// Last is the number of the last entry written.
func (l *Log) Last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Size is the log file's size in bytes.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// Syncs counts the fsyncs run (what group commit saves).
func (l *Log) Syncs() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncs
}

// Err is why the log refuses entries (nil: it takes them).
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.poison
}

// Poison makes the log refuse entries until Compact, as a failed fsync
// does, for a store whose log no longer says what it holds (a change
// written that could not be undone).
func (l *Log) Poison(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.poison == nil {
		l.poison = fmt.Errorf("%s: %w; no more entries until it is rewritten", l.path, err)
	}
}

// Compact writes snapshot to snapPath (whole, through a rename), then
// rewrites the log with only its entries numbered keepFrom and up (the
// entries the snapshot may not hold), and clears a poisoned log. From
// then on an entry numbered below keepFrom counts as on disk: Wait
// answers its writer so, even if its fsync failed, since the snapshot
// holds it. An error means the snapshot or the rewrite failed; when the
// snapshot did, the log is as it was.
func (l *Log) Compact(snapPath string, snapshot []byte, keepFrom uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.cond.Wait()
	}
	if l.f == nil {
		return errors.New(l.path + ": closed")
	}
	if err := atomicfile.Write(snapPath, snapshot); err != nil {
		return err
	}
	keepFrom = max(keepFrom, l.covered+1)
	buf := appendFrame(nil, keepFrom-1, nil)
	if keepFrom <= l.last {
		b, err := os.ReadFile(l.path)
		if err != nil {
			return fmt.Errorf("%s: %w", l.path, err)
		}
		entries, _, _, _, _ := scan(b, keepFrom-1, l.maxEntry)
		prev := keepFrom - 1
		for _, e := range entries {
			if e.Seq > l.last || l.isRefused(e.Seq) {
				continue
			}
			if e.Seq != prev+1 {
				buf = appendFrame(buf, e.Seq-1, nil) // a refused entry is missing, not lost
			}
			buf = appendFrame(buf, e.Seq, e.Payload)
			prev = e.Seq
		}
		if prev != l.last {
			buf = appendFrame(buf, l.last, nil) // so are refused ones after the last kept
		}
	}
	werr := atomicfile.Write(l.path, buf)
	if werr != nil && !l.replaced() {
		return werr // the old file is still the log
	}
	// The rewrite is at the path (even when syncing its directory then
	// failed, and werr says so): later entries go to it, not to the old
	// file the rename unlinked.
	f, err := os.OpenFile(l.path, os.O_RDWR, 0o600)
	if err != nil {
		l.poison = fmt.Errorf("%s: reopening after compaction: %w", l.path, err)
		return l.poison
	}
	l.f.Close()
	l.f, l.size, l.syncedSize, l.poison = f, int64(len(buf)), int64(len(buf)), nil
	l.synced = l.last // the rewrite was synced
	l.covered = keepFrom - 1
	kept := l.refused[:0]
	for _, r := range l.refused {
		if r[1] > l.covered {
			kept = append(kept, r)
		}
	}
	l.refused = kept
	l.cond.Broadcast()
	return werr
}

// replaced says whether the file at the log's path is no longer the one
// it writes to (a rename replaced it); l.mu held.
func (l *Log) replaced() bool {
	at, err := os.Stat(l.path)
	if err != nil {
		return false
	}
	cur, err := l.f.Stat()
	return err == nil && !os.SameFile(at, cur)
}

// Close closes the file once no fsync is under way; the log then refuses
// entries.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.cond.Wait()
	}
	if l.f == nil {
		return nil
	}
	l.poison = errors.New(l.path + ": closed")
	err := l.f.Close()
	l.f = nil
	return err
}
