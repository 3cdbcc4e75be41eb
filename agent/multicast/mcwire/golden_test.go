package mcwire

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/namecast/namecast/dubbo"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the cases below")

// Datagrams as a Dubbo 3.3 MulticastRegistry sends them (Format: the
// verb, one space, url.toFullString(), "\n"), byte for byte.
var sent = []struct {
	name string
	verb Verb
	url  string
}{
	{"register-provider", Register, "dubbo://198.18.0.1:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider&dubbo=2.0.2&dynamic=true&generic=false&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&pid=4242&release=3.3.1&side=provider&timestamp=1733620000000"},
	{"unregister-provider", Unregister, "dubbo://198.18.0.1:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider&dubbo=2.0.2&dynamic=true&generic=false&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&pid=4242&release=3.3.1&side=provider&timestamp=1733620000000"},
	{"register-consumer", Register, "consumer://198.18.0.2/org.apache.dubbo.demo.DemoService?application=demo-consumer&category=consumers&check=false&dubbo=2.0.2&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&pid=4343&side=consumer&timestamp=1733620001000"},
	{"subscribe-consumer", Subscribe, "consumer://198.18.0.2/org.apache.dubbo.demo.DemoService?application=demo-consumer&category=providers,configurators,routers&check=false&dubbo=2.0.2&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&pid=4343&side=consumer&timestamp=1733620001000&unicast=false"},
	{"subscribe-admin", Subscribe, "admin://198.18.0.3/*?category=*&check=false&classifier=*&enabled=*&group=*&interface=*&version=*"},
	{"unsubscribe-consumer", Unsubscribe, "consumer://198.18.0.2/org.apache.dubbo.demo.DemoService?category=providers,configurators,routers&interface=org.apache.dubbo.demo.DemoService&side=consumer"},
}

// Datagrams as they may arrive, and what a receiver makes of each.
var received = []struct {
	name     string
	datagram []byte
}{
	// Java's receive buffer is zeroed after each datagram: NULs trail.
	{"nul-padded", append([]byte("register dubbo://198.18.0.1:20880/com.foo.Bar?interface=com.foo.Bar\n"), make([]byte, 40)...)},
	{"crlf-and-spaces", []byte("  subscribe   consumer://198.18.0.2/com.foo.Bar?category=providers \r\n")},
	{"second-line-ignored", []byte("unregister dubbo://198.18.0.1:20880/com.foo.Bar\nregister dubbo://198.18.0.9:1/x.Y\n")},
	{"verb-by-prefix", []byte("registerdubbo://198.18.0.1:20880/com.foo.Bar")},
	{"no-newline", []byte("register dubbo://198.18.0.1:20880/com.foo.Bar")},
	{"unknown-verb", []byte("hello dubbo://198.18.0.1:20880/com.foo.Bar\n")},
	{"empty", []byte("\n\n")},
	{"verb-alone", []byte("register\n")},
	{"not-a-url", []byte("register ://\n")},
	{"cut-by-buffer", append([]byte("register dubbo://198.18.0.1:20880/com.foo.Bar?methods="), bytes.Repeat([]byte("m,"), 1100)...)},
	{"long-datagram-short-line", append([]byte("register dubbo://198.18.0.1:20880/com.foo.Bar\n"), bytes.Repeat([]byte{'x'}, 3000)...)},
}

func golden(name string) string { return filepath.Join("testdata", "golden", name) }

func TestFormatIsDubbosDatagram(t *testing.T) {
	for _, c := range sent {
		t.Run(c.name, func(t *testing.T) {
			got := Format(c.verb, dubbo.MustParse(c.url))
			path := golden(c.name + ".datagram")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Format:\n got %q\nwant %q", got, want)
			}
			m, err := Parse(want)
			if err != nil || m.Verb != c.verb || m.URL.String() != c.url {
				t.Fatalf("Parse(golden) = %v %q, %v; want %v %q", m.Verb, m.URL.String(), err, c.verb, c.url)
			}
		})
	}
}

// describe is what a receiver makes of a datagram, as a line: the verb
// and the URL's full form, or the kind of refusal.
func describe(b []byte) string {
	m, err := Parse(b)
	switch {
	case errors.Is(err, ErrVerb):
		return "refused: no verb\n"
	case errors.Is(err, ErrCut):
		return "refused: cut\n"
	case errors.Is(err, ErrURL):
		return "refused: bad url\n"
	case err != nil:
		return "refused: " + err.Error() + "\n"
	}
	return string(m.Verb) + " " + m.URL.String() + "\n"
}

func TestParseGoldenDatagrams(t *testing.T) {
	for _, c := range received {
		t.Run(c.name, func(t *testing.T) {
			in, want := golden(c.name+".datagram"), golden(c.name+".want")
			if *update {
				if err := os.WriteFile(in, c.datagram, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(want, []byte(describe(c.datagram)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(b); got != string(w) {
				t.Fatalf("Parse(%s):\n got %q\nwant %q", in, got, w)
			}
		})
	}
}

// A URL that fits Dubbo's receive buffer with its verb is sent; one
// byte more is not.
func TestFits(t *testing.T) {
	base := "dubbo://198.18.0.1:1/a.B?x="
	n := ReceiveBuffer - len("register ") - 1 - len(base)
	if u := dubbo.MustParse(base + strings.Repeat("y", n)); !Fits(Register, u) || len(Format(Register, u)) != ReceiveBuffer {
		t.Fatalf("a %d-byte datagram does not fit", len(Format(Register, u)))
	}
	if u := dubbo.MustParse(base + strings.Repeat("y", n+1)); Fits(Register, u) {
		t.Fatal("a datagram one byte past the buffer fits")
	}
}
