package mcwire

import "testing"

// FuzzParse: Parse never panics; what it accepts, Format writes back as a
// datagram that parses to the same message. Seeds: the golden datagrams
// and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, c := range received {
		f.Add(c.datagram)
	}
	f.Add([]byte("subscribe admin://198.18.0.3/*?interface=*&category=*\n"))
	f.Add([]byte("unregister\x00dubbo://h:1/I\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		out := Format(m.Verb, m.URL)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) = %v %q, but its Format %q fails: %v", b, m.Verb, m.URL.String(), out, err)
		}
		if again.Verb != m.Verb || again.URL.String() != m.URL.String() {
			t.Fatalf("round trip of %q: %v %q, then %v %q", b, m.Verb, m.URL.String(), again.Verb, again.URL.String())
		}
	})
}
