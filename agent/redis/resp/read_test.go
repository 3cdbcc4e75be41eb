package resp

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The requests Dubbo's Jedis, go-redis and redis-cli send, and the
// malformed ones, as the reader reads them: testdata/requests.golden
// (go test -update rewrites it).
var requests = []struct{ name, raw string }{
	{"jedis hset", "*4\r\n$4\r\nHSET\r\n$28\r\n/dubbo/com.foo.Bar/providers\r\n$41\r\ndubbo://10.0.0.1:20880/com.foo.Bar?side=p\r\n$13\r\n1700000000000\r\n"},
	{"jedis psubscribe", "*2\r\n$10\r\nPSUBSCRIBE\r\n$20\r\n/dubbo/com.foo.Bar/*\r\n"},
	{"jedis scan", "*6\r\n$4\r\nSCAN\r\n$1\r\n0\r\n$5\r\nMATCH\r\n$20\r\n/dubbo/com.foo.Bar/*\r\n$5\r\nCOUNT\r\n$4\r\n1000\r\n"},
	{"go-redis hello", "*2\r\n$5\r\nhello\r\n$1\r\n3\r\n"},
	{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"},
	{"binary bulk", "*2\r\n$4\r\nECHO\r\n$4\r\n\x00\r\n\xff\r\n"},
	{"inline", "PING\r\n"},
	{"inline lf only", "ECHO  a   b\n"},
	{"inline quotes", "SET \"a b\" 'c d' \"\\x41\\n\" 'it\\'s'\r\n"},
	{"empty array skipped", "*0\r\n*-1\r\n\r\nPING\r\n"},
	{"bulk length negative", "*2\r\n$4\r\nPING\r\n$-5\r\n"},
	{"bulk length past the bound", "*1\r\n$65537\r\n"},
	{"not a bulk", "*2\r\n$4\r\nPING\r\nx3\r\n"},
	{"array past the bound", "*1025\r\n"},
	{"array length not a number", "*x\r\n"},
	{"unbalanced quotes", "ECHO \"a\r\n"},
	{"quote then no space", "ECHO \"a\"b\r\n"},
	{"truncated", "*2\r\n$4\r\nPI"},
}

func readAll(raw string) string {
	rd := NewReader(strings.NewReader(raw), DefaultLimits)
	var out []string
	for {
		args, err := rd.ReadCommand()
		if err != nil {
			if errors.Is(err, io.EOF) {
				out = append(out, "EOF")
			} else {
				out = append(out, "error: "+err.Error())
			}
			return strings.Join(out, "\n")
		}
		out = append(out, fmt.Sprintf("%q", args))
	}
}

func TestRequestsGolden(t *testing.T) {
	var b strings.Builder
	for _, r := range requests {
		fmt.Fprintf(&b, "## %s\n%q\n%s\n\n", r.name, r.raw, readAll(r.raw))
	}
	golden(t, "testdata/requests.golden", b.String())
}

// The replies the door builds, byte for byte: testdata/replies.golden.
func TestRepliesGolden(t *testing.T) {
	replies := []struct {
		name string
		b    []byte
	}{
		{"simple", Simple(nil, "OK")},
		{"error", Err(nil, "ERR unknown command 'a\r\nb'")},
		{"integer", Int(nil, -42)},
		{"bulk", Bulk(nil, "dubbo://10.0.0.1:20880/x")},
		{"empty bulk", Bulk(nil, "")},
		{"null bulk", NullBulk(nil)},
		{"null array", NullArray(nil)},
		{"bulks", Bulks(nil, []string{"a", "bc"})},
		{"empty array", Bulks(nil, nil)},
		{"pmessage", Bulk(Bulk(Bulk(Bulk(Array(nil, 4), "pmessage"), "/dubbo/*"), "/dubbo/x/providers"), "register")},
	}
	var b strings.Builder
	for _, r := range replies {
		fmt.Fprintf(&b, "## %s\n%q\n\n", r.name, r.b)
		v, err := ReadValue(bufio.NewReader(bytes.NewReader(r.b)))
		if err != nil || !bytes.Equal(v, r.b) {
			t.Errorf("%s: ReadValue read %q, %v", r.name, v, err)
		}
	}
	golden(t, "testdata/replies.golden", b.String())
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it after a deliberate change):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// A line already longer than the bound is refused as soon as its bytes
// say so, without waiting for its end.
func TestLongLineRefusedBeforeItsEnd(t *testing.T) {
	pr, pw := io.Pipe()
	go pw.Write([]byte(strings.Repeat("x", 70<<10))) // and never a newline
	defer pw.Close()
	_, err := NewReader(pr, DefaultLimits).ReadCommand()
	if err != errInline {
		t.Fatalf("err %v, want %v", err, errInline)
	}
}

// FuzzReadCommand: the reader never panics, never returns more than its
// limits allow, and what it reads from an array re-encodes to the same
// command.
func FuzzReadCommand(f *testing.F) {
	for _, r := range requests {
		f.Add([]byte(r.raw))
	}
	lim := Limits{MaxArgs: 8, MaxBulk: 64, MaxCommand: 256, MaxInline: 128}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), lim)
		for range 16 {
			args, err := rd.ReadCommand()
			if err != nil {
				return
			}
			if len(args) == 0 || len(args) > lim.MaxArgs {
				t.Fatalf("%d args", len(args))
			}
			total := 0
			enc := Array(nil, len(args))
			for _, a := range args {
				if len(a) > lim.MaxBulk && len(a) > lim.MaxInline {
					t.Fatalf("an argument of %d bytes", len(a))
				}
				total += len(a)
				enc = Bulk(enc, string(a))
			}
			if total > lim.MaxCommand {
				t.Fatalf("a command of %d bytes", total)
			}
			if len(enc) > 0 && total <= lim.MaxCommand && allWithin(args, lim.MaxBulk) {
				again, err := NewReader(bytes.NewReader(enc), lim).ReadCommand()
				if err != nil || fmt.Sprintf("%q", again) != fmt.Sprintf("%q", args) {
					t.Fatalf("%q re-encoded reads back as %q, %v", args, again, err)
				}
			}
		}
	})
}

func allWithin(args [][]byte, n int) bool {
	for _, a := range args {
		if len(a) > n {
			return false
		}
	}
	return true
}
