package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// frameHeader is the length and checksum before a frame's body; seqSize
// the sequence number that begins the body.
const (
	frameHeader = 8
	seqSize     = 8
)

// DefaultMaxEntry bounds one entry's payload unless Options say otherwise.
const DefaultMaxEntry = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends the frame of entry seq with payload p (none: a mark).
func appendFrame(dst []byte, seq uint64, p []byte) []byte {
	n := seqSize + len(p)
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, seq)
	dst = append(dst, p...)
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+frameHeader:], castagnoli))
	return dst
}

// Entry is one entry read back: its sequence number and payload.
type Entry struct {
	Seq     uint64
	Payload []byte
}

// Damage is what reading a log found damaged (each part is judged on its
// own: what is intact is read).
type Damage struct {
	// Stretches are damaged stretches skipped before the last intact
	// frame.
	Stretches int
	// Torn is the length of the bytes after the last intact frame that
	// are no frame: a torn write (Open cuts them off).
	Torn int64
	// Lost is the highest sequence number damage destroyed between
	// intact entries (0: none known).
	Lost uint64
	// Aside is where Open copied the damaged file (Options.KeepDamaged).
	Aside string
}

// Any reports whether anything was found damaged.
func (d Damage) Any() bool { return d.Stretches > 0 || d.Torn > 0 || d.Lost > 0 }

// scan reads frames of this format from b: the entries numbered after
// after, where the last intact frame ends (good), the highest number seen
// (last, at least after), and the damage. legacy counts intact frames
// whose body is an old JSON body (legacy.go) rather than an entry.
func scan(b []byte, after uint64, maxEntry int) (entries []Entry, good int64, last uint64, dmg Damage, legacy int) {
	last = after
	inDamage := false
	for off := 0; off+frameHeader <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n < seqSize || n > seqSize+maxEntry || off+frameHeader+n > len(b) ||
			crc32.Checksum(b[off+frameHeader:off+frameHeader+n], castagnoli) != binary.BigEndian.Uint32(b[off+4:]) {
			if !inDamage {
				dmg.Stretches++
				inDamage = true
			}
			off++
			continue
		}
		inDamage = false
		body := b[off+frameHeader : off+frameHeader+n]
		off += frameHeader + n
		good = int64(off)
		if body[0] == '{' {
			legacy++ // a JSON body: an old lease log's frame
			continue
		}
		seq := binary.BigEndian.Uint64(body)
		if n == seqSize { // a mark
			last = max(last, seq)
			continue
		}
		if seq > last+1 {
			dmg.Lost = max(dmg.Lost, seq-1)
		}
		last = max(last, seq)
		if seq > after {
			entries = append(entries, Entry{Seq: seq, Payload: body[seqSize:]})
		}
	}
	if int64(len(b)) > good {
		// Whatever follows the last intact frame is a torn tail, not
		// damage between entries.
		if inDamage {
			dmg.Stretches--
		}
		dmg.Torn = int64(len(b)) - good
	}
	return entries, good, last, dmg, legacy
}
