package zkwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// ErrShort means a record ended before all of its fields did.
var ErrShort = errors.New("zkwire: record shorter than its fields")

// Decoder reads jute's binary encoding from one frame body. The first error
// sticks: later reads return zero values, and Err reports it.
type Decoder struct {
	b   []byte
	off int
	err error
}

// NewDecoder reads from b, which it does not copy: strings are copied out,
// buffers alias b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Err is the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Remaining is how many bytes are left unread.
func (d *Decoder) Remaining() int { return len(d.b) - d.off }

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.err = ErrShort
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// Bool reads a boolean; any non-zero byte is true, as Java reads it.
func (d *Decoder) Bool() bool {
	p := d.take(1)
	return p != nil && p[0] != 0
}

// Int reads a 32-bit big-endian integer.
func (d *Decoder) Int() int32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

// Long reads a 64-bit big-endian integer.
func (d *Decoder) Long() int64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// Buffer reads a length-prefixed byte string; -1 is nil. The result aliases
// the frame.
func (d *Decoder) Buffer() []byte {
	n := d.Int()
	if d.err != nil || n == -1 {
		return nil
	}
	if n < -1 {
		d.err = fmt.Errorf("zkwire: negative length %d", n)
		return nil
	}
	return d.take(int(n))
}

// String reads a ustring; -1 (kazoo's empty string) reads as "".
func (d *Decoder) String() string {
	b := d.Buffer()
	if d.err == nil && !utf8.Valid(b) {
		d.err = errors.New("zkwire: string is not UTF-8")
	}
	return string(b)
}

// Strings reads a vector<ustring>; -1 reads as nil.
func (d *Decoder) Strings() []string {
	n := d.Int()
	if d.err != nil || n == -1 {
		return nil
	}
	// Each element takes at least its 4-byte length: a count the rest of
	// the frame cannot hold is refused before anything is allocated.
	if n < -1 || int(n) > d.Remaining()/4 {
		d.err = fmt.Errorf("zkwire: vector of %d elements in %d bytes", n, d.Remaining())
		return nil
	}
	out := make([]string, 0, n)
	for i := int32(0); i < n && d.err == nil; i++ {
		out = append(out, d.String())
	}
	return out
}

// Encoder appends jute's binary encoding to a byte slice.
type Encoder struct{ B []byte }

func (e *Encoder) Bool(v bool) {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
}

func (e *Encoder) Int(v int32)  { e.B = binary.BigEndian.AppendUint32(e.B, uint32(v)) }
func (e *Encoder) Long(v int64) { e.B = binary.BigEndian.AppendUint64(e.B, uint64(v)) }

// Buffer writes b; nil is written as -1 (Java's null), empty as 0.
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(b)))
	e.B = append(e.B, b...)
}

// String writes s, never as -1.
func (e *Encoder) String(s string) {
	e.Int(int32(len(s)))
	e.B = append(e.B, s...)
}

// Strings writes a vector<ustring>, never as -1. It sizes the buffer once:
// a listing of 1,000 provider URLs is ~110 KB.
func (e *Encoder) Strings(v []string) {
	n := 4
	for _, s := range v {
		n += 4 + len(s)
	}
	e.B = slices.Grow(e.B, n)
	e.Int(int32(len(v)))
	for _, s := range v {
		e.String(s)
	}
}
