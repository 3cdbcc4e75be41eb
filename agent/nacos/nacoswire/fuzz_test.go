package nacoswire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadMessage: arbitrary bytes never panic the framing, and nothing
// larger than the limit is returned or allocated for.
func FuzzReadMessage(f *testing.F) {
	for _, g := range goldens() {
		f.Add(g.frame())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			msg, err := ReadMessage(r, 1<<16)
			if err != nil {
				return
			}
			if len(msg) > 1<<16 {
				t.Fatalf("message of %d bytes", len(msg))
			}
		}
	})
}

// FuzzUnmarshal: arbitrary bytes never panic the payload decoder; what it
// accepts is within bounds and survives a Marshal/Unmarshal round trip.
func FuzzUnmarshal(f *testing.F) {
	for _, g := range goldens() {
		f.Add(g.payload().Marshal())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Unmarshal(b)
		if err != nil {
			return
		}
		if len(p.Headers) > MaxHeaders || len(p.Type) > MaxString || len(p.ClientIP) > MaxString {
			t.Fatalf("accepted a payload past the bounds: %d headers", len(p.Headers))
		}
		q, err := Unmarshal(p.Marshal())
		if err != nil {
			t.Fatalf("re-decoding our own encoding: %v", err)
		}
		if len(p.Body) == 0 {
			p.Body = nil
		}
		if len(q.Body) == 0 {
			q.Body = nil
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip: %+v became %+v", p, q)
		}
	})
}

func TestReadMessageRefuses(t *testing.T) {
	big := binary.BigEndian.AppendUint32([]byte{0}, MaxMessage+1)
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"truncated header", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"truncated body", []byte{0, 0, 0, 0, 5, 1}, io.ErrUnexpectedEOF},
		{"no body at all", []byte{0, 0, 0, 0, 5}, io.ErrUnexpectedEOF},
		{"compressed", []byte{1, 0, 0, 0, 0}, ErrCompressed},
		{"over the limit", big, ErrTooLarge},
	} {
		_, err := ReadMessage(bytes.NewReader(tc.in), MaxMessage)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := ReadMessage(bytes.NewReader([]byte{7, 0, 0, 0, 0}), MaxMessage); err == nil {
		t.Error("flag 7 accepted")
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	many := &Payload{Type: "x", Headers: map[string]string{}}
	for i := range MaxHeaders + 1 {
		many.Headers[strings.Repeat("k", i+1)] = "v"
	}
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"truncated key", []byte{0x80}},
		{"length past the end", []byte{0x12, 0x05, 0x1a}},
		{"group wire type", []byte{0x13}},
		{"field zero", []byte{0x02, 0x00}},
		{"type not UTF-8", (&Payload{Type: "\xff"}).Marshal()},
		{"type too long", (&Payload{Type: strings.Repeat("a", MaxString+1)}).Marshal()},
		{"header value too long", (&Payload{Type: "x", Headers: map[string]string{"k": strings.Repeat("v", MaxString+1)}}).Marshal()},
		{"too many headers", many.Marshal()},
	} {
		if p, err := Unmarshal(tc.in); err == nil {
			t.Errorf("%s: accepted as %+v", tc.name, p)
		}
	}
	// Unknown fields of every wire type are skipped, as protobuf requires.
	in := append([]byte{0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4, 0x62, 0x01, 'x'},
		(&Payload{Type: "HealthCheckRequest"}).Marshal()...)
	p, err := Unmarshal(in)
	if err != nil || p.Type != "HealthCheckRequest" {
		t.Fatalf("unknown fields: %+v, %v", p, err)
	}
}
