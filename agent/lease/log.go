package lease

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The leases are kept in two files: leases.json, every lease with its
// records as of some moment, and leases.log, the changes since, appended
// one lease at a time. Rewriting the whole file for each registration
// made a registration's answer cost a write of every other one (52 ms
// with 5,000 held); appending costs what that one lease holds. When the
// log outgrows the snapshot it is folded into a new leases.json.
//
// Neither is fsynced. They guard the clients on this host against the
// agent process's death (a kill -9 or a crash), which loses nothing the
// kernel has been given; a host that crashes or reboots takes those
// clients down too, and a lease restored after that would serve routes of
// processes that no longer exist, so restoreLeases drops every lease with
// a deadline when the boot id changed (see bootID).

const leaseLogFile = "leases.log"

// maxLeaseEntry bounds one log entry: a broker with many topics is the
// largest lease (~200 bytes a topic).
const maxLeaseEntry = 64 << 20

// logEntry is one change of the lease table: a lease with its records as
// they are now, or a lease gone. Seq orders entries across compactions: a
// snapshot holds every entry up to its Seq.
type logEntry struct {
	Seq  uint64          `json:"seq"`
	Put  json.RawMessage `json:"put,omitempty"` // a leaseBody
	Drop *leaseRef       `json:"drop,omitempty"`
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
}

// leaseLog appends framed entries: length and CRC-32C of the body (4
// bytes each, big-endian), then the body. A torn last frame (the process
// died mid-write) fails its length or checksum and ends the replay there.
type leaseLog struct {
	f    *os.File
	size int64
	seq  uint64
	buf  []byte
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
	return &leaseLog{f: f, size: good, seq: seq}, nil
}

// append writes e with the next seq.
func (l *leaseLog) append(e logEntry) error {
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

// readLeaseLog returns the entries of path after seq after, the length of
// its intact prefix and the highest seq in it. A missing file is empty.
func readLeaseLog(path string, after uint64) (entries []logEntry, good int64, seq uint64, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, after, nil
	}
	if err != nil {
		return nil, 0, after, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	seq = after
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return entries, good, seq, nil // end, or a torn header
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n == 0 || n > maxLeaseEntry {
			return entries, good, seq, nil
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil || crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(hdr[4:]) {
			return entries, good, seq, nil
		}
		var e logEntry
		if err := json.Unmarshal(body, &e); err != nil {
			return entries, good, seq, nil
		}
		good += 8 + int64(n)
		if e.Seq > seq {
			seq = e.Seq
		}
		if e.Seq > after {
			entries = append(entries, e)
		}
	}
}

// replaceFile writes then renames, so the process's crash leaves the old
// file or the new one; unsynced (see above), so a host crash may leave
// either, or an empty file.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// bootID names this boot of the host ("" where the kernel does not say):
// leases saved under another boot belong to processes that are gone.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
