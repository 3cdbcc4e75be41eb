package agent

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"sync"

	"github.com/namecast/namecast/internal/atomicfile"
)

// appendLog is a file of entries, one a line, each "crc32c-hex payload\n",
// that a writer may count on once Append has returned: the entry is
// written and fsynced. Concurrent writers share fsyncs (group commit): a
// writer whose entry a running fsync does not cover waits for it, then
// one of the waiters runs the next, covering every entry written
// meanwhile.
//
// A failed write is cut off again (the file truncated to where the entry
// began), so a later entry never lands behind half of one; if even that
// fails, or an fsync fails (the kernel may then have dropped the dirty
// pages, and a later fsync would report success for data it lost), the
// log refuses every later entry until Compact rewrites it. A failed fsync
// also cuts off every entry it did not cover: each is refused to its
// writer and never applied, so none may come back at a restart.
//
// Reading (readLog) judges each line on its own: a damaged line is
// skipped and counted, and the lines after it still count.
type appendLog struct {
	path string

	mu      sync.Mutex
	cond    *sync.Cond
	f       *os.File
	size    int64 // bytes written
	written uint64
	synced  uint64
	// syncedSize is where the synced entries end: a failed fsync cuts the
	// file back to it, since every entry after it is refused.
	syncedSize int64
	syncing    bool
	broken     error // set on a failure that leaves the file uncertain
	// inflight are the entries written and not yet done, by seq: where
	// each begins in the file now (Compact moves them). Known by seq, not
	// offset, since a compaction moves an entry while its writer waits.
	inflight map[uint64]int64
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openAppendLog opens (creating) the log at path for appending. A last
// line without its newline (a torn write) is closed with one first, so
// it cannot swallow the next entry.
func openAppendLog(path string) (*appendLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err == nil && last[0] != '\n' {
			if _, err := f.WriteAt([]byte{'\n'}, size); err != nil {
				f.Close()
				return nil, err
			}
			size++
		}
	}
	l := &appendLog{path: path, f: f, size: size, syncedSize: size, inflight: map[uint64]int64{}}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// encodeEntry is one line of the log.
func encodeEntry(payload []byte) []byte {
	var sum [4]byte
	c := crc32.Checksum(payload, crcTable)
	sum[0], sum[1], sum[2], sum[3] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
	line := make([]byte, 0, 10+len(payload))
	line = hex.AppendEncode(line, sum[:])
	line = append(line, ' ')
	line = append(line, payload...)
	return append(line, '\n')
}

// write appends payload's line without waiting for it to be synced; it
// returns the entry's sequence number, for wait and for done: the entry
// stays in flight (kept by Compact) until done is called.
func (l *appendLog) write(payload []byte) (seq uint64, err error) {
	if bytes.IndexByte(payload, '\n') >= 0 {
		return 0, errors.New("log entry holds a newline")
	}
	line := encodeEntry(payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return 0, l.broken
	}
	start := l.size
	if n, err := l.f.WriteAt(line, start); err != nil {
		if n > 0 {
			if terr := l.f.Truncate(start); terr != nil {
				l.broken = fmt.Errorf("%s: a failed write could not be cut off (%v); no more entries until it is rewritten", l.path, terr)
			}
		}
		return 0, fmt.Errorf("%s: %w", l.path, err)
	}
	l.size += int64(len(line))
	l.written++
	l.inflight[l.written] = start
	return l.written, nil
}

// wait returns once entry seq is fsynced, running the fsync itself when
// none that covers it is under way.
func (l *appendLog) wait(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.synced < seq {
		if l.broken != nil {
			return l.broken
		}
		if l.syncing {
			l.cond.Wait()
			continue
		}
		l.syncing = true
		target, targetSize, f := l.written, l.size, l.f
		l.mu.Unlock()
		err := syncFile(f)
		l.mu.Lock()
		l.syncing = false
		if err != nil && l.f == f {
			l.broken = fmt.Errorf("%s: fsync failed (%v); no more entries until it is rewritten", l.path, err)
			// Every entry not yet synced is now refused to its writer
			// and never applied: cut them off, so a restart cannot
			// replay a write that was answered "not made".
			if terr := f.Truncate(l.syncedSize); terr != nil {
				l.broken = fmt.Errorf("%s: fsync failed (%v) and the refused entries could not be cut off (%v); no more entries until it is rewritten", l.path, err, terr)
			} else {
				l.size = l.syncedSize
			}
		} else if err == nil && l.f == f {
			l.synced = max(l.synced, target)
			l.syncedSize = max(l.syncedSize, targetSize)
		}
		l.cond.Broadcast()
	}
	return nil
}

// isBroken says whether the log refuses entries until Compact.
func (l *appendLog) isBroken() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken != nil
}

// done ends entry seq's time in flight.
func (l *appendLog) done(seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inflight, seq)
}

// Append writes payload and waits until it is on disk.
func (l *appendLog) Append(payload []byte) error {
	seq, err := l.write(payload)
	if err != nil {
		return err
	}
	defer l.done(seq)
	return l.wait(seq)
}

// mark is where the entries not yet covered by a snapshot begin: the
// oldest entry still in flight (written, perhaps not yet applied), or the
// end of the log.
func (l *appendLog) mark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.size
	for _, off := range l.inflight {
		m = min(m, off)
	}
	return m
}

// Compact replaces the log by its entries from offset from on (those a
// snapshot just written does not cover), synced, and clears a broken log.
func (l *appendLog) Compact(from int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.cond.Wait()
	}
	tail := make([]byte, l.size-from)
	if _, err := l.f.ReadAt(tail, from); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	werr := atomicfile.Write(l.path, tail)
	if werr != nil && !l.replaced() {
		return werr // the old file is still the log
	}
	// The rewrite is at the path (even when syncing its directory then
	// failed, and werr says so): later entries must go to it, not to the
	// old file the rename unlinked.
	f, err := os.OpenFile(l.path, os.O_RDWR, 0o600)
	if err != nil {
		l.broken = fmt.Errorf("%s: reopening after compaction: %w", l.path, err)
		return l.broken
	}
	l.f.Close()
	l.f, l.size, l.broken = f, int64(len(tail)), nil
	l.synced, l.syncedSize = l.written, l.size // the rewrite was synced
	for seq, off := range l.inflight {
		l.inflight[seq] = max(off-from, 0)
	}
	l.cond.Broadcast()
	return werr
}

// replaced says whether the file at the log's path is no longer the one
// it writes to (a rename replaced it); l.mu held.
func (l *appendLog) replaced() bool {
	at, err := os.Stat(l.path)
	if err != nil {
		return false
	}
	cur, err := l.f.Stat()
	return err == nil && !os.SameFile(at, cur)
}

func (l *appendLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.cond.Wait()
	}
	l.broken = errors.New(l.path + ": closed")
	return l.f.Close()
}

// readLog returns the payloads of the valid lines of the log at path, in
// order, and how many lines were damaged (a bad checksum or form). A
// missing file has no entries.
func readLog(path string) (payloads [][]byte, damaged int, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		if p, ok := decodeEntry(line); ok {
			payloads = append(payloads, p)
		} else {
			damaged++
		}
	}
	return payloads, damaged, nil
}

func decodeEntry(line []byte) ([]byte, bool) {
	if len(line) < 9 || line[8] != ' ' {
		return nil, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return nil, false
	}
	p := line[9:]
	c := crc32.Checksum(p, crcTable)
	return p, sum == [4]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}
}

// syncFile is (*os.File).Sync; tests replace it to fail.
var syncFile = (*os.File).Sync
