package zkwire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// MaxPacket is ZooKeeper's jute.maxbuffer default (0xfffff): the largest
// frame body either side accepts. The real server closes a connection that
// announces more; so do we, before allocating anything.
const MaxPacket = 0xfffff

// ReadLength reads a frame's 4-byte length prefix, raw, so the caller can
// first check whether it spells a four-letter word.
func ReadLength(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

// ReadBody reads a frame body of length n (as ReadLength returned it) into
// buf when it fits, else into a new slice. n above max or negative is an
// error returned before any allocation.
func ReadBody(r io.Reader, n uint32, max int, buf []byte) ([]byte, error) {
	if int32(n) < 0 || int(n) > max {
		return nil, fmt.Errorf("zkwire: frame of %d bytes exceeds the %d-byte limit (jute.maxbuffer)", int32(n), max)
	}
	if int(n) <= cap(buf) {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// ReadPacket reads one whole frame body (no four-letter words).
func ReadPacket(r io.Reader, max int) ([]byte, error) {
	n, err := ReadLength(r)
	if err != nil {
		return nil, err
	}
	return ReadBody(r, n, max, nil)
}

// AppendPacket appends one frame: a length prefix, then whatever body
// writes.
func AppendPacket(dst []byte, body func(*Encoder)) []byte {
	start := len(dst)
	e := Encoder{B: append(dst, 0, 0, 0, 0)}
	body(&e)
	binary.BigEndian.PutUint32(e.B[start:], uint32(len(e.B)-start-4))
	return e.B
}

// Four-letter words a health checker may send instead of a first frame
// (ZooKeeper's NIOServerCnxn checkFourLetterWord). Read as a length they are
// ~1.9 GB, so they never collide with a real ConnectRequest.
const (
	WordRuok uint32 = 0x72756f6b // "ruok"
	WordSrvr uint32 = 0x73727672 // "srvr"
	WordMntr uint32 = 0x6d6e7472 // "mntr"
	WordStat uint32 = 0x73746174 // "stat"
)

// fourLetterWords are the words ZooKeeper 3.8 knows
// (FourLetterCommands.cmd2String); any other length is a length.
var fourLetterWords = map[string]bool{
	"conf": true, "cons": true, "crst": true, "dirs": true, "dump": true, "envi": true, "gtmk": true,
	"ruok": true, "stmk": true, "srst": true, "srvr": true, "stat": true, "wchc": true, "wchp": true,
	"wchs": true, "mntr": true, "isro": true, "icfg": true, "sysp": true,
}

// FourLetterWord returns the word a raw length spells, or "" if it is not
// one ZooKeeper knows.
func FourLetterWord(raw uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], raw)
	if w := string(b[:]); fourLetterWords[w] {
		return w
	}
	return ""
}
