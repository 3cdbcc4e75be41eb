package remoting

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
)

// Frame layout (§1.2), all integers big-endian:
//
//	int32 length N     = 4 + headerLength + bodyLength (not counting itself)
//	byte  serializeType, uint24 headerLength
//	header, body
const (
	// DefaultMaxFrame is Java's cap (Netty's maxFrameLength): the whole
	// frame, length prefix included, must fit in 16 MiB. Brokers with tens
	// of thousands of topics exceed it on REGISTER_BROKER (issue #5296), so
	// a server should let operators raise it.
	DefaultMaxFrame = 16 << 20

	// maxHeaderLength is what the 24-bit header-length field can express.
	maxHeaderLength = 1<<24 - 1

	// eagerAlloc is how much a decoder allocates on a peer's word alone;
	// past it, buffers grow only as bytes actually arrive, so a peer that
	// announces 16 MiB and sends nothing costs us 64 KiB, not 16 MiB.
	eagerAlloc = 64 << 10

	// keepHeaderScratch bounds the header buffer a Decoder keeps between
	// frames; a rare huge header is not worth holding on to.
	keepHeaderScratch = 4 << 10
)

// FrameTooLargeError reports a frame whose announced size exceeds the cap.
// Nothing of it has been read beyond the length prefix, so the stream cannot
// be resynchronised: close the connection.
type FrameTooLargeError struct {
	Length int64 // whole frame, length prefix included
	Max    int
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("frame length %d exceeds the %d-byte cap", e.Length, e.Max)
}

// FormatError reports bytes that are not a valid frame, header or body.
type FormatError struct {
	Reason string
}

func (e *FormatError) Error() string { return "malformed remoting data: " + e.Reason }

func malformed(format string, args ...any) error {
	return &FormatError{Reason: fmt.Sprintf(format, args...)}
}

// Decoder reads frames from one stream. It keeps a small header buffer
// between frames, so decoding a request without a body allocates only the
// Command and its strings. Not safe for concurrent use.
type Decoder struct {
	r       io.Reader
	max     int
	prefix  [8]byte
	scratch []byte
}

// NewDecoder returns a Decoder that rejects frames larger than maxFrame
// bytes (length prefix included; <= 0 means DefaultMaxFrame). Give it a
// buffered reader: it reads a frame in three parts.
func NewDecoder(r io.Reader, maxFrame int) *Decoder {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &Decoder{r: r, max: maxFrame}
}

// ReadFrame reads one frame from r; see [Decoder.Decode].
func ReadFrame(r io.Reader, maxFrame int) (*Command, error) {
	return NewDecoder(r, maxFrame).Decode()
}

// Decode reads and decodes the next frame. It returns io.EOF when the stream
// ends cleanly between frames, io.ErrUnexpectedEOF when it ends inside one,
// *FrameTooLargeError or *FormatError for bytes a server must close the
// connection over, and read errors as they come.
func (d *Decoder) Decode() (*Command, error) {
	if _, err := io.ReadFull(d.r, d.prefix[:4]); err != nil {
		return nil, err // io.EOF only if no byte of the prefix arrived
	}
	n := int64(binary.BigEndian.Uint32(d.prefix[:4]))
	if 4+n > int64(d.max) {
		return nil, &FrameTooLargeError{Length: 4 + n, Max: d.max}
	}
	if n < 4 {
		return nil, malformed("frame length %d leaves no room for the 4-byte header-length field", n)
	}
	if _, err := io.ReadFull(d.r, d.prefix[4:8]); err != nil {
		return nil, eofInFrame(err)
	}
	word := binary.BigEndian.Uint32(d.prefix[4:8])
	typ, hlen := SerializeType(word>>24), int64(word&maxHeaderLength)
	if hlen > n-4 {
		return nil, malformed("header length %d exceeds the %d bytes left in the frame", hlen, n-4)
	}
	if typ != SerializeJSON && typ != SerializeRocketMQ {
		return nil, malformed("unknown serialize type %d", uint8(typ))
	}
	var err error
	d.scratch, err = readN(d.r, d.scratch[:0], int(hlen))
	if err != nil {
		return nil, eofInFrame(err)
	}
	header := d.scratch
	if cap(d.scratch) > keepHeaderScratch {
		d.scratch = nil
	}
	c := &Command{SerializeType: typ}
	if blen := int(n - 4 - hlen); blen > 0 {
		if c.Body, err = readN(d.r, nil, blen); err != nil {
			return nil, eofInFrame(err)
		}
	}
	if err := decodeHeader(typ, header, c); err != nil {
		return nil, err
	}
	return c, nil
}

func eofInFrame(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readN appends exactly n bytes from r to buf. Up to eagerAlloc it reserves
// the room at once; beyond that it grows with what arrives (doubling, so
// copying costs at most as much again as the data).
func readN(r io.Reader, buf []byte, n int) ([]byte, error) {
	start := len(buf)
	want := start + n
	if cap(buf) < want {
		first := min(n, eagerAlloc)
		if cap(buf)-start < first {
			nb := make([]byte, start, start+first)
			copy(nb, buf)
			buf = nb
		}
	}
	for len(buf) < want {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(want-len(buf), max(cap(buf), eagerAlloc)))
		}
		end := min(cap(buf), want)
		m, err := io.ReadFull(r, buf[len(buf):end])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func decodeHeader(typ SerializeType, h []byte, c *Command) error {
	if typ == SerializeRocketMQ {
		return decodeBinaryHeader(h, c)
	}
	return decodeJSONHeader(h, c)
}

// AppendFrame appends c, length prefix included, to dst in c's header
// encoding. It fails only for commands the wire cannot express (a header
// over 16 MiB, a frame over 2 GiB, binary-header fields out of range); dst
// is then returned unchanged.
func AppendFrame(dst []byte, c *Command) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	var err error
	switch c.SerializeType {
	case SerializeJSON:
		dst = appendJSONHeader(dst, c)
	case SerializeRocketMQ:
		dst, err = appendBinaryHeader(dst, c)
	default:
		err = fmt.Errorf("cannot encode serialize type %d", uint8(c.SerializeType))
	}
	if err != nil {
		return dst[:start], err
	}
	hlen := len(dst) - start - 8
	if hlen > maxHeaderLength {
		return dst[:start], fmt.Errorf("header of %d bytes exceeds the 24-bit header-length field", hlen)
	}
	n := int64(4+hlen) + int64(len(c.Body))
	if n > math.MaxInt32 {
		return dst[:start], fmt.Errorf("frame of %d bytes exceeds the int32 length field", n+4)
	}
	dst = append(dst, c.Body...)
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	binary.BigEndian.PutUint32(dst[start+4:], uint32(c.SerializeType)<<24|uint32(hlen))
	return dst, nil
}

// WriteTo writes c as one frame with a single Write call, so that writers
// serialised by a mutex never interleave frames. A server loop that writes
// often should keep a buffer and use AppendFrame instead.
func (c *Command) WriteTo(w io.Writer) (int64, error) {
	b, err := AppendFrame(make([]byte, 0, 256+len(c.Body)), c)
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}
