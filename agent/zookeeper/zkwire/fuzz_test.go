package zkwire

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The seed corpora in testdata/fuzz are the spec's golden frames (and bodies
// for FuzzRequest); rewrite them with `go test -run TestWriteFuzzSeeds -update`.

// FuzzReadPacket: arbitrary bytes never panic the framing, and nothing
// larger than MaxPacket is ever returned (or allocated for).
func FuzzReadPacket(f *testing.F) {
	for _, g := range goldens() {
		f.Add(g.encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			body, err := ReadPacket(r, MaxPacket)
			if err != nil {
				return
			}
			if len(body) > MaxPacket {
				t.Fatalf("body of %d bytes", len(body))
			}
		}
	})
}

// requestRecord returns the record a request of type op carries, as the
// door decodes it, or nil for bodiless ops.
func requestRecord(op int32) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return &CreateRequest{}
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return &PathWatch{}
	case OpDelete:
		return &PathVersion{}
	case OpSetData:
		return &SetDataRequest{}
	case OpAddWatch, OpCheckWatches, OpRemoveWatches:
		return &PathMode{}
	case OpSync, OpGetACL:
		return &PathOnly{}
	case OpSetWatches:
		return &SetWatches{}
	case OpSetWatches2:
		return &SetWatches{V2: true}
	case OpAuth:
		return &AuthPacket{}
	case OpMulti:
		return &MultiRequest{}
	}
	return nil
}

// FuzzRequest decodes a frame body as the door does (a ConnectRequest, or a
// header and the record its opcode names): never a panic, and whatever
// decodes re-encodes to bytes that decode to the same value.
func FuzzRequest(f *testing.F) {
	for _, g := range goldens() {
		if g.rep == nil {
			f.Add(g.encode()[4:])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var cr ConnectRequest
		if Unmarshal(body, &cr) == nil {
			roundTrip(t, &cr, &ConnectRequest{})
		}
		d := NewDecoder(body)
		var h RequestHeader
		h.Decode(d)
		rec := requestRecord(h.Type)
		if d.Err() != nil || rec == nil {
			return
		}
		rec.Decode(d)
		if d.Err() != nil {
			return
		}
		again := requestRecord(h.Type)
		roundTrip(t, rec, again)
	})
}

func roundTrip(t *testing.T, r, zero Record) {
	t.Helper()
	var e Encoder
	r.Encode(&e)
	if err := Unmarshal(e.B, zero); err != nil {
		t.Fatalf("re-encoded %+v does not decode: %v", r, err)
	}
	// kazoo's -1 strings decode as "", nil vectors re-encode as 0: compare
	// the re-encoded forms, which are canonical.
	var e2 Encoder
	zero.Encode(&e2)
	if !bytes.Equal(e.B, e2.B) && !reflect.DeepEqual(r, zero) {
		t.Fatalf("round trip changed %+v into %+v", r, zero)
	}
}

func TestWriteFuzzSeeds(t *testing.T) {
	if !*update {
		t.Skip("writes the seed corpora; run with -update")
	}
	write := func(target, name string, b []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range goldens() {
		write("FuzzReadPacket", g.name, g.encode())
		if g.rep == nil {
			write("FuzzRequest", g.name, g.encode()[4:])
		}
	}
	write("FuzzReadPacket", "too_long", []byte{0x00, 0x10, 0x00, 0x00, 1, 2, 3})
	write("FuzzReadPacket", "negative", []byte{0xff, 0xff, 0xff, 0xfe})
	write("FuzzRequest", "kazoo_empty_string", []byte{0, 0, 0, 1, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0})
	write("FuzzRequest", "huge_vector", []byte{0, 0, 0, 1, 0, 0, 0, 101, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
}
