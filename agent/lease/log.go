package lease

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// The leases are kept in two files: leases.json, every lease with its
// records as of some moment, and leases.log, the changes since, appended
// one lease at a time. Rewriting the whole file for each registration
// made a registration's answer cost a write of every other one (52 ms
// with 5,000 held); appending costs what that one lease holds. When the
// log outgrows the snapshot it is folded into a new leases.json.
//
// Both are fsynced before a door answers: an entry is written under the
// store's save lock, then synced outside it, and writers that wait at
// once share one fsync (group commit: wait). A write that fails is cut
// off again, so no later entry lands behind half of one; an fsync that
// fails leaves the log refusing entries until the next snapshot rewrites
// everything (after a failed fsync the kernel may have dropped the dirty
// pages, and a later fsync would report success for data it lost).
//
// A host that crashes or reboots takes the clients on it down too, and a
// lease restored after that would serve routes of processes that no
// longer exist, so Restore drops every lease with a deadline written
// during another boot (see bootID): the snapshot says its boot, and a
// run whose own snapshot could not be written marks the log with its
// boot before its first lease (logEntry.Boot).
//
// Reading judges each entry on its own: a damaged frame is skipped by
// looking for the next intact one, so one bad entry mid-log does not cut
// off the ones after it. What the damaged entry said is lost, and it may
// have been any lease's change or removal, so the leases last written
// before it are not restored (readSavedLeases): a registration lost to
// damage is registered again by its client, where one brought back would
// serve what its client withdrew or replaced.

const leaseLogFile = "leases.log"

// maxLeaseEntry bounds one log entry: a broker with many topics is the
// largest lease (~200 bytes a topic).
const maxLeaseEntry = 64 << 20

// logEntry is one change of the lease table: a lease with its records as
// they are now, or a lease gone. Seq orders entries across compactions: a
// snapshot holds every entry up to its Seq.
type logEntry struct {
	Seq uint64          `json:"seq"`
	Put json.RawMessage `json:"put,omitempty"` // a leaseBody
	// Also are other leases written with Put, as one change: those that
	// cover a record Put changes (Hold), so that every lease holding a
	// record comes back with it as last acknowledged.
	Also []json.RawMessage `json:"also,omitempty"`
	Drop *leaseRef         `json:"drop,omitempty"`
	// Drops are leases gone with the puts (HoldAll), as one change.
	Drops []leaseRef `json:"drops,omitempty"`
	// Boot, in an entry of nothing else, marks the entries after it as
	// written during that boot of the host, up to the next mark (before
	// the first: the snapshot's boot). A run writes one before its first
	// lease when the snapshot is of another boot (its own could not be
	// written: a full disk).
	Boot string `json:"boot,omitempty"`
	// Inc and At are our origin's incarnation and seq as the entry was
	// written (settle.go): every change of our records at or below At
	// was applied before it.
	Inc uint64 `json:"inc,omitempty"`
	At  uint64 `json:"at,omitempty"`
}

type leaseRef struct {
	Door string `json:"door"`
	ID   string `json:"id"`
}

// leaseBody is a lease with its records, as written; records are encoded
// once, also to tell whether they changed (Store.saved).
type leaseBody struct {
	Lease
	Records json.RawMessage `json:"records"`
	// Inc and At say, in leases.json, where the records were written
	// from, as logEntry's do for an entry's leases.
	Inc uint64 `json:"inc,omitempty"`
	At  uint64 `json:"at,omitempty"`
}

// leaseLog appends framed entries: length and CRC-32C of the body (4
// bytes each, big-endian), then the body. A torn last frame (the process
// died mid-write) fails its length or checksum and ends the replay there.
type leaseLog struct {
	f    *os.File
	size int64
	seq  uint64
	buf  []byte
	// written is seq, readable without the store's save lock.
	written atomic.Uint64

	// Group commit: guarded by syncMu, not by the store's save lock.
	syncMu  sync.Mutex
	cond    *sync.Cond
	synced  uint64 // every entry up to it is on disk
	syncing bool
	broken  error  // an fsync failed: refuse entries until a snapshot
	syncs   uint64 // fsyncs run, for tests
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openLeaseLog opens path for appending after a replay that ended at
// good bytes with entry seq; anything past good (a torn frame) is cut.
func openLeaseLog(path string, good int64, seq uint64) (*leaseLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	l := &leaseLog{f: f, size: good, seq: seq, synced: seq}
	l.written.Store(seq)
	l.cond = sync.NewCond(&l.syncMu)
	return l, nil
}

// wait returns once entry seq is on disk, running the fsync itself when
// none that covers it is under way; writers waiting together share one.
func (l *leaseLog) wait(seq uint64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	for l.synced < seq {
		if l.broken != nil {
			return l.broken
		}
		if l.syncing {
			l.cond.Wait()
			continue
		}
		l.syncing = true
		l.syncs++
		target, f := l.seqNow(), l.f // l.f changes only under both locks (FailWritesForTest)
		l.syncMu.Unlock()
		err := syncFile(f)
		l.syncMu.Lock()
		l.syncing = false
		if err != nil {
			l.broken = fmt.Errorf("fsync of %s failed (%v): no registration is saved until the next snapshot is written", l.f.Name(), err)
		} else {
			l.synced = max(l.synced, target)
		}
		l.cond.Broadcast()
	}
	return nil
}

// seqNow is the last entry written; syncMu held (seq itself changes
// under the store's save lock, so it is read through an atomic copy).
func (l *leaseLog) seqNow() uint64 { return l.written.Load() }

// healthy reports a failed fsync as an error for new entries.
func (l *leaseLog) healthy() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	return l.broken
}

// diverge makes the log refuse entries until the next snapshot, as a
// failed fsync does: what it holds is no longer what is held (Undo).
func (l *leaseLog) diverge(err error) {
	l.syncMu.Lock()
	if l.broken == nil {
		l.broken = fmt.Errorf("the lease log holds a change that was refused and could not be undone (%v): no registration is saved until the next snapshot is written", err)
	}
	l.syncMu.Unlock()
}

// markSynced records that everything written is on disk (a snapshot
// holding it all was synced) and clears a failed fsync.
func (l *leaseLog) markSynced() {
	l.syncMu.Lock()
	l.synced, l.broken = l.written.Load(), nil
	l.cond.Broadcast()
	l.syncMu.Unlock()
}

// append writes e with the next seq, without syncing it (wait does).
func (l *leaseLog) append(e logEntry) error {
	if err := l.healthy(); err != nil {
		return err
	}
	e.Seq = l.seq + 1
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if len(body) > maxLeaseEntry {
		return fmt.Errorf("a lease of %d bytes is over the %d-byte limit of one saved lease", len(body), maxLeaseEntry)
	}
	l.buf = binary.BigEndian.AppendUint32(l.buf[:0], uint32(len(body)))
	l.buf = binary.BigEndian.AppendUint32(l.buf, crc32.Checksum(body, castagnoli))
	l.buf = append(l.buf, body...)
	if _, err := l.f.Write(l.buf); err != nil {
		// A partial frame would end every later replay early: cut it.
		_ = l.f.Truncate(l.size)
		_, _ = l.f.Seek(l.size, io.SeekStart)
		return err
	}
	l.seq = e.Seq
	l.written.Store(e.Seq)
	l.size += int64(len(l.buf))
	if cap(l.buf) > 1<<20 {
		l.buf = nil // a big broker's entry is not kept for the next small one
	}
	return nil
}

// reset empties the log once a snapshot holds everything in it.
func (l *leaseLog) reset() error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.Seek(0, io.SeekStart)
	l.size = 0
	return err
}

func (l *leaseLog) close() error { return l.f.Close() }

// readLeaseLog returns the entries of path after seq after, where its
// last intact entry ends, the highest seq in it, how many damaged
// stretches it skipped, and the highest seq a damaged stretch destroyed
// (0: none). A missing file is empty. A damaged frame (a bad length,
// checksum or body) does not end the replay: the reader looks for the
// next intact frame from the following byte on. Entries are numbered
// without gaps (a failed append is cut off and its seq reused), so an
// intact entry numbered past the one before it tells what the damage
// between them destroyed; damage after the last intact entry is a torn
// write, of an entry never acknowledged (each is fsynced before its
// answer), which destroyed nothing.
func readLeaseLog(path string, after uint64) (entries []logEntry, good int64, seq uint64, damaged int, lost uint64, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, after, 0, 0, nil
	}
	if err != nil {
		return nil, 0, after, 0, 0, err
	}
	seq = after
	inDamage := false
	for off := 0; off+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off : off+4]))
		var e logEntry
		if n == 0 || n > maxLeaseEntry || off+8+n > len(b) ||
			crc32.Checksum(b[off+8:off+8+n], castagnoli) != binary.BigEndian.Uint32(b[off+4:off+8]) ||
			json.Unmarshal(b[off+8:off+8+n], &e) != nil {
			if !inDamage {
				damaged++
				inDamage = true
			}
			off++
			continue
		}
		inDamage = false
		off += 8 + n
		good = int64(off)
		if e.Seq > seq+1 && e.Seq > after+1 {
			lost = max(lost, e.Seq-1)
		}
		if e.Seq > seq {
			seq = e.Seq
		}
		if e.Seq > after {
			entries = append(entries, e)
		}
	}
	if int64(len(b)) > good && !inDamage {
		damaged++ // a torn tail shorter than a frame header
	}
	return entries, good, seq, damaged, lost, nil
}

// syncFile fsyncs the log; a variable so tests can make it fail as a
// failing disk does.
var syncFile = (*os.File).Sync

// bootID names this boot of the host ("" where the kernel does not say):
// leases saved under another boot belong to processes that are gone.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
