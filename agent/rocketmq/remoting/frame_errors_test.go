package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestDecodeErrors(t *testing.T) {
	frameWith := func(n uint32, rest ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, n), rest...)
	}
	cases := []struct {
		name  string
		in    []byte
		max   int
		check func(error) bool
		msg   string
	}{
		{"clean EOF", nil, 0, is(io.EOF), ""},
		{"EOF in prefix", []byte{0, 0}, 0, is(io.ErrUnexpectedEOF), ""},
		{"EOF in header", goRouteRequestJSON()[:50], 0, is(io.ErrUnexpectedEOF), ""},
		{"EOF in body", jsonFrame(`{}`, []byte("body"))[:12], 0, is(io.ErrUnexpectedEOF), ""},
		{"too large", frameWith(32<<20 - 4), DefaultMaxFrame, tooLarge, "frame length 33554432 exceeds the 16777216-byte cap"},
		{"negative length", frameWith(0x80000000), DefaultMaxFrame, tooLarge, "frame length 2147483652 exceeds the 16777216-byte cap"},
		{"one over the cap", frameWith(1021, make([]byte, 1021)...), 1024, tooLarge, "frame length 1025 exceeds the 1024-byte cap"},
		{"length too short", frameWith(3, 0, 0, 0), 0, malformedErr, "malformed remoting data: frame length 3 leaves no room for the 4-byte header-length field"},
		{"header past frame", frameWith(8, 0, 0, 0, 5, 0, 0, 0, 0), 0, malformedErr, "malformed remoting data: header length 5 exceeds the 4 bytes left in the frame"},
		{"serialize type", frameWith(6, 2, 0, 0, 2, '{', '}'), 0, malformedErr, "malformed remoting data: unknown serialize type 2"},
		{"empty JSON header", frameWith(4, 0, 0, 0, 0), 0, malformedErr, "malformed remoting data: JSON header is not an object"},
		{"JSON null", jsonFrame("null", nil), 0, malformedErr, ""},
		{"JSON array", jsonFrame("[]", nil), 0, malformedErr, ""},
		{"JSON garbage", jsonFrame(`{"code":`, nil), 0, malformedErr, ""},
		{"JSON trailing", jsonFrame(`{"code":1}{}`, nil), 0, malformedErr, ""},
		{"JSON code string", jsonFrame(`{"code":"105"}`, nil), 0, malformedErr, ""},
		{"JSON opaque overflow", jsonFrame(`{"opaque":2147483648}`, nil), 0, malformedErr, ""},
		{"JSON ext not object", jsonFrame(`{"extFields":"x"}`, nil), 0, malformedErr, ""},
		{"binary short", frameWith(24, append([]byte{1, 0, 0, 20}, make([]byte, 20)...)...), 0, malformedErr, "malformed remoting data: binary header of 20 bytes is shorter than its 21-byte fixed part"},
		{"binary remark past header", binaryFrame(func(h []byte) { binary.BigEndian.PutUint32(h[13:], 100) }), 0, malformedErr, "malformed remoting data: remark length 100 does not fit the 24 bytes left"},
		{"binary negative remark", binaryFrame(func(h []byte) { binary.BigEndian.PutUint32(h[13:], 0xffffffff) }), 0, malformedErr, ""},
		{"binary ext past header", binaryFrame(func(h []byte) { binary.BigEndian.PutUint32(h[17:], 21) }), 0, malformedErr, ""},
		{"binary key past ext", binaryFrame(func(h []byte) { binary.BigEndian.PutUint16(h[21:], 30) }), 0, malformedErr, ""},
		{"binary negative key", binaryFrame(func(h []byte) { binary.BigEndian.PutUint16(h[21:], 0x8000) }), 0, malformedErr, ""},
		{"binary value past ext", binaryFrame(func(h []byte) { binary.BigEndian.PutUint32(h[28:], 10) }), 0, malformedErr, ""},
		{"binary ext cut mid-entry", binaryFrame(func(h []byte) { binary.BigEndian.PutUint32(h[17:], 1) }), 0, malformedErr, "malformed remoting data: ext fields end inside a key length"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tc.in), tc.max)
			if !tc.check(err) {
				t.Fatalf("err = %#v (%v)", err, err)
			}
			if tc.msg != "" && err.Error() != tc.msg {
				t.Errorf("message\n got %q\nwant %q", err, tc.msg)
			}
		})
	}
}

// binaryFrame returns the spec's binary request after mutate has damaged
// its header (offsets relative to the header start).
func binaryFrame(mutate func(header []byte)) []byte {
	f := goRouteRequestBinary()
	mutate(f[8:])
	return f
}

func is(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }

func tooLarge(err error) bool {
	var e *FrameTooLargeError
	return errors.As(err, &e)
}

func malformedErr(err error) bool {
	var e *FormatError
	return errors.As(err, &e)
}

func TestAppendFrameErrors(t *testing.T) {
	cases := map[string]*Command{
		"binary code":    {Code: 40000, SerializeType: SerializeRocketMQ},
		"binary version": {Version: -40000, SerializeType: SerializeRocketMQ},
		"binary key":     {ExtFields: map[string]string{strings.Repeat("k", 1<<15): ""}, SerializeType: SerializeRocketMQ},
		"header size":    {Remark: strings.Repeat("r", 1<<24)},
		"serialize type": {SerializeType: 9},
	}
	for name, c := range cases {
		dst := []byte("keep")
		got, err := AppendFrame(dst, c)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
		if string(got) != "keep" {
			t.Errorf("%s: dst changed to %d bytes", name, len(got))
		}
	}
}

// A peer that announces a large frame and sends little must not make us
// reserve the announced size.
func TestDecodeAllocatesWhatArrives(t *testing.T) {
	for _, lie := range []struct {
		name  string
		frame []byte
	}{
		{"header", append(binary.BigEndian.AppendUint32(nil, 16<<20-4), 0, 0xff, 0, 0, '{')},
		{"body", append(binary.BigEndian.AppendUint32(nil, 16<<20-4), 0, 0, 0, 2, '{', '}', 'x')},
	} {
		allocated := bytesAllocated(func() {
			_, err := ReadFrame(bytes.NewReader(lie.frame), DefaultMaxFrame)
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: err = %v", lie.name, err)
			}
		})
		if allocated > 2*eagerAlloc {
			t.Errorf("%s: a 16 MiB claim backed by %d bytes allocated %d bytes", lie.name, len(lie.frame), allocated)
		}
	}
}

func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
