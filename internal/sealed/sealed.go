// Package sealed checksums a JSON object file as a whole, so that damage
// which leaves it valid JSON (a flipped digit in a sequence number or a
// stamp, a changed byte in a string) is found rather than believed.
//
// A sealed file is the object with a first member "crc32c": the CRC-32C
// (Castagnoli), as 8 hex digits, of every byte after that member:
//
//	{"crc32c":"1a2b3c4d","seq":12,...}
//
// It stays JSON: readers decode it as before and ignore the member.
// Files written before sealing (an object whose first member is one of
// the names the caller knew) are accepted as they are.
package sealed

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
)

var table = crc32.MakeTable(crc32.Castagnoli)

const prefix = `{"crc32c":"`

// Seal returns the JSON object b (as json.Marshal writes it) sealed.
func Seal(b []byte) []byte {
	if len(b) < 2 || b[0] != '{' || b[1] == '}' {
		panic("sealed: not a JSON object with members")
	}
	rest := b[1:]
	out := make([]byte, 0, len(prefix)+10+len(rest))
	out = append(out, prefix...)
	out = hex.AppendEncode(out, binary.BigEndian.AppendUint32(nil, crc32.Checksum(rest, table)))
	out = append(out, '"', ',')
	return append(out, rest...)
}

// Check says whether b is intact: sealed with a matching checksum, or
// unsealed but starting with one of the members legacy names (files
// written before sealing). Anything else is damaged.
func Check(b []byte, legacy ...string) error {
	if bytes.HasPrefix(b, []byte(prefix)) {
		n := len(prefix) + 8
		if len(b) < n+2 || b[n] != '"' || b[n+1] != ',' {
			return errors.New("damaged: its checksum member is cut short")
		}
		var sum [4]byte
		if _, err := hex.Decode(sum[:], b[len(prefix):n]); err != nil {
			return fmt.Errorf("damaged: its checksum %q is not hex", b[len(prefix):n])
		}
		if got := binary.BigEndian.AppendUint32(nil, crc32.Checksum(b[n+2:], table)); !bytes.Equal(got, sum[:]) {
			return fmt.Errorf("damaged: its checksum is %x, its contents' %x", sum, got)
		}
		return nil
	}
	for _, name := range legacy {
		if bytes.HasPrefix(b, []byte(`{"`+name+`":`)) {
			return nil
		}
	}
	return errors.New("damaged: it starts with neither a checksum nor a known member")
}
