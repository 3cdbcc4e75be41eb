package remoting

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// Fuzz targets for every decoder of network bytes. Seed corpora live in
// testdata/fuzz/<target>/ and are regenerated from the fixtures by
// `go test -run TestWriteFuzzSeeds -update`.

func FuzzReadFrame(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var c *Command
		var err error
		allocated := bytesAllocated(func() { c, err = ReadFrame(bytes.NewReader(data), DefaultMaxFrame) })
		// The cap is 16 MiB; what we may spend is bounded by what arrived.
		if limit := uint64(256<<10 + 64*len(data)); allocated > limit {
			t.Fatalf("%d input bytes allocated %d bytes (limit %d)", len(data), allocated, limit)
		}
		if err != nil {
			if !tooLarge(err) && !malformedErr(err) && err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		b, err := AppendFrame(nil, c)
		if err != nil {
			t.Fatalf("cannot re-encode %v: %v", c, err)
		}
		again, err := ReadFrame(bytes.NewReader(b), len(b))
		if err != nil {
			t.Fatalf("cannot decode our own encoding of %v: %v\n% x", c, err, b)
		}
		if !sameCommand(again, c) {
			t.Fatalf("round trip changed the command\n got %v\nwant %v", again, c)
		}
	})
}

// FuzzJSONHeader holds the fast header scanner to the encoding/json reading
// wherever the scanner answers.
func FuzzJSONHeader(f *testing.F) {
	f.Fuzz(func(t *testing.T, h []byte) {
		var fast, slow Command
		slowErr := decodeJSONHeaderSlow(h, &slow)
		if !decodeJSONHeaderFast(h, &fast) {
			return
		}
		if slowErr != nil {
			t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", h, slowErr)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("readings of %q differ\nfast %v\nslow %v", h, &fast, &slow)
		}
	})
}

func FuzzLenientJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		out := QuoteNumericKeys(in)
		if !bytes.Equal(in, orig) {
			t.Fatal("input modified")
		}
		if json.Valid(in) && !bytes.Equal(out, in) {
			t.Fatalf("valid JSON rewritten:\n in %q\nout %q", in, out)
		}
		if again := QuoteNumericKeys(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n once %q\ntwice %q", out, again)
		}
		// The only change allowed is inserting quotes.
		j := 0
		for i := 0; i < len(out); i++ {
			if j < len(in) && out[i] == in[j] {
				j++
			} else if out[i] != '"' {
				t.Fatalf("byte %d of output, %q, is neither input nor an inserted quote:\n in %q\nout %q", i, out[i], in, out)
			}
		}
		if j != len(in) {
			t.Fatalf("input bytes dropped:\n in %q\nout %q", in, out)
		}
	})
}

func FuzzRegisterBody(f *testing.F) {
	const maxInflated = 256 << 10
	f.Fuzz(func(t *testing.T, body []byte, version int) {
		var rb *RegisterBrokerBody
		var err error
		allocated := bytesAllocated(func() { rb, err = DecodeRegisterBrokerBody(body, version, maxInflated) })
		if limit := uint64(32*maxInflated + 64*len(body)); allocated > limit {
			t.Fatalf("%d input bytes allocated %d bytes (limit %d)", len(body), allocated, limit)
		}
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if rb.Topics == nil {
			t.Fatal("nil topic table")
		}
	})
}

// FuzzInflatedRegister explores the layout inside the zlib stream, which
// FuzzRegisterBody rarely reaches through valid compression.
func FuzzInflatedRegister(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, version int) {
		var err error
		allocated := bytesAllocated(func() { _, err = parseInflatedRegister(data, version) })
		if limit := uint64(64<<10 + 64*len(data)); allocated > limit {
			t.Fatalf("%d input bytes allocated %d bytes (limit %d)", len(data), allocated, limit)
		}
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
	})
}

// TestWriteFuzzSeeds regenerates the seed corpora under -update; otherwise
// it checks they exist, so that a fuzz run never starts from nothing.
func TestWriteFuzzSeeds(t *testing.T) {
	var frames [][]byte
	frames = append(frames, goRouteRequestJSON(), goRouteRequestBinary(), jsonFrame(javaRegisterHeader, []byte(registerBody5x)))
	for _, typ := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
		resp := NewResponse(&Command{Opaque: 9}, TopicNotExist, "No topic route info in name server for the topic: T")
		resp.SerializeType = typ
		resp.SetExt("k", "v")
		resp.Body = []byte(`{"brokerDatas":[]}`)
		b, err := AppendFrame(nil, resp)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	frames = append(frames, jsonFrame(`{"code":1,"language":9,"extFields":{"a":1,"b":true,"c":null},"x":{0:"y"}}`, nil),
		[]byte{0, 0, 0, 4, 0, 0, 0, 0}, []byte{0x7f, 0xff, 0xff, 0xff})

	headers := [][]byte{[]byte(goRouteRequestHeader), []byte(javaRegisterHeader),
		[]byte(`{"code":0,"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`),
		[]byte(`{"code":1,"remark":null,"extFields":null,"language":null}`),
		[]byte(" { \"code\" : -0 , \"extFields\" : { \"k\" : \"\u00e9\" } } "),
		[]byte(`{"extFields":{"brokerId":0,"obj":{"a":[1]},"esc":"\u0041"}}`)}

	lenient := [][]byte{
		(&TopicRouteData{BrokerDatas: []BrokerData{{BrokerName: "b", BrokerAddrs: map[int64]string{0: "a:1", 1: "a:2"}}}}).AppendJSON(nil, LegacyJSON),
		[]byte(registerBody5xStatic), []byte(`{"s":"{0:1}","t":"\"{1:2","u":[{-3:4}]}`), []byte("{ 0 :\n1}"),
	}

	writeSeeds(t, "FuzzReadFrame", func(add func(...any)) {
		for _, b := range frames {
			add(b)
		}
	})
	writeSeeds(t, "FuzzJSONHeader", func(add func(...any)) {
		for _, h := range headers {
			add(h)
		}
	})
	writeSeeds(t, "FuzzLenientJSON", func(add func(...any)) {
		for _, b := range lenient {
			add(b)
		}
	})
	writeSeeds(t, "FuzzRegisterBody", func(add func(...any)) {
		add([]byte(registerBody5x), 479)
		add([]byte(registerBody49), 409)
		add([]byte(registerBody5xStatic), 479)
		add(compressedRegister49(t), 409)
		add(compressedRegister5x(t), 479)
		add([]byte(`{"dataVersion":{"counter":1},"topicConfigTable":{}}`), 36)
	})
	writeSeeds(t, "FuzzInflatedRegister", func(add func(...any)) {
		add(inflate(t, compressedRegister49(t)), 409)
		add(inflate(t, compressedRegister5x(t)), 479)
	})
}

func inflate(t *testing.T, b []byte) []byte {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// writeSeeds writes each add(...) call as one corpus file in the
// "go test fuzz v1" format, or, without -update, checks the directory has
// as many files.
func writeSeeds(t *testing.T, target string, gen func(add func(...any))) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	var files [][]byte
	gen(func(args ...any) {
		var b bytes.Buffer
		b.WriteString("go test fuzz v1\n")
		for _, a := range args {
			switch v := a.(type) {
			case []byte:
				fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
			case int:
				fmt.Fprintf(&b, "int(%d)\n", v)
			default:
				t.Fatalf("unsupported seed type %T", a)
			}
		}
		files = append(files, b.Bytes())
	})
	if !*update {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) < len(files) {
			t.Errorf("%s: %d seed files, want at least %d (run with -update): %v", dir, len(entries), len(files), err)
		}
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, b := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
