package wal

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
)

// Releases up to 0.1.0 wrote two other formats, read here so that their
// data dirs are restored (and rewritten in this package's format when
// opened):
//
//   - the rules log: one entry a line, "crc32c-hex payload\n", the CRC-32C
//     of the payload as 8 hex digits. Lines carry no number: they are
//     numbered here in their order, from after+1.
//   - the lease log: frames like this package's (length, CRC-32C, body),
//     whose body is a JSON object with the entry's number in "seq".
//
// Damage is judged as in this format: a damaged line or frame is skipped
// and counted, and the rest are read.

// legacyFormat names an old format found ("" for this package's).
type legacyFormat string

const (
	legacyLines  legacyFormat = "lines"  // rules.log up to 0.1.0
	legacyFrames legacyFormat = "frames" // leases.log up to 0.1.0
)

// readAny reads b in whichever format it is written.
func readAny(b []byte, after uint64, maxEntry int) (entries []Entry, good int64, last uint64, dmg Damage, format legacyFormat) {
	entries, good, last, dmg, legacy := scan(b, after, maxEntry)
	switch {
	case legacy > 0:
		entries, good, last, dmg = scanLegacyFrames(b, after, maxEntry)
		return entries, good, last, dmg, legacyFrames
	case good == 0 && len(b) > 0:
		// Not one intact frame: an old rules log, if any line is one.
		if le, lgood, llast, ldmg, ok := scanLegacyLines(b, after); ok {
			return le, lgood, llast, ldmg, legacyLines
		}
	}
	return entries, good, last, dmg, ""
}

// scanLegacyLines reads an old rules log; ok false: not one line of it
// is intact.
func scanLegacyLines(b []byte, after uint64) (entries []Entry, good int64, last uint64, dmg Damage, ok bool) {
	last = after
	off := 0
	for off < len(b) {
		end := bytes.IndexByte(b[off:], '\n')
		if end < 0 {
			end = len(b) - off
		}
		line := b[off : off+end]
		off += end + 1
		if len(line) == 0 {
			continue
		}
		p, valid := decodeLegacyLine(line)
		if !valid {
			dmg.Stretches++
			continue
		}
		ok = true
		last++
		entries = append(entries, Entry{Seq: last, Payload: p})
		good = int64(min(off, len(b)))
	}
	return entries, good, last, dmg, ok
}

func decodeLegacyLine(line []byte) ([]byte, bool) {
	if len(line) < 9 || line[8] != ' ' {
		return nil, false
	}
	var sum [4]byte
	if _, err := hex.Decode(sum[:], line[:8]); err != nil {
		return nil, false
	}
	p := line[9:]
	return p, binary.BigEndian.Uint32(sum[:]) == crc32.Checksum(p, castagnoli)
}

// scanLegacyFrames reads an old lease log: frames whose body is JSON with
// the entry's number in "seq".
func scanLegacyFrames(b []byte, after uint64, maxEntry int) (entries []Entry, good int64, last uint64, dmg Damage) {
	last = after
	inDamage := false
	for off := 0; off+frameHeader <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		var head struct {
			Seq uint64 `json:"seq"`
		}
		if n == 0 || n > maxEntry || off+frameHeader+n > len(b) ||
			crc32.Checksum(b[off+frameHeader:off+frameHeader+n], castagnoli) != binary.BigEndian.Uint32(b[off+4:]) ||
			json.Unmarshal(b[off+frameHeader:off+frameHeader+n], &head) != nil {
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
		if head.Seq > last+1 {
			dmg.Lost = max(dmg.Lost, head.Seq-1)
		}
		last = max(last, head.Seq)
		if head.Seq > after {
			entries = append(entries, Entry{Seq: head.Seq, Payload: body})
		}
	}
	if int64(len(b)) > good {
		if inDamage {
			dmg.Stretches--
		}
		dmg.Torn = int64(len(b)) - good
	}
	return entries, good, last, dmg
}
