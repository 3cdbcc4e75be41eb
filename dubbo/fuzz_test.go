package dubbo

import (
	"strings"
	"testing"
)

// FuzzParse checks the identity invariant on arbitrary bytes: whatever Parse
// accepts, its String parses again to the same String, within the limits.
// Seeds are the f.Add calls below plus testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		provider,
		"consumer://10.0.0.9/com.foo.Bar?category=providers,configurators,routers&check=false",
		"dubbo://[::1]:20880/I?a&b=&=c;d=1",
		"dubbo://fe80:0:0:0:894:aeec:f37d:23e1%en0:20880/I",
		"dubbo%3A%2F%2F10.0.0.5%3A20880%2FI%3Fa%3D1%26b%3D2",
		"dubbo://u:p@h/I?default.version=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s)
		if err != nil {
			return
		}
		canon := u.String()
		if len(canon) > MaxLength {
			t.Fatalf("Parse(%q) gave a %d-byte canonical form, over MaxLength", s, len(canon))
		}
		if !strings.Contains(canon, "://") {
			t.Fatalf("Parse(%q).String() = %q has no scheme separator", s, canon)
		}
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its String %q fails: %v", s, canon, err)
		}
		if again.String() != canon {
			t.Fatalf("not a fixed point:\n in    %q\n first %q\n again %q", s, canon, again.String())
		}
		// Matching and the derived accessors must not panic on anything
		// Parse accepts.
		_ = Match(u, again)
		_ = Categories(u)
		_ = Empty(u, CategoryProviders).String()
		_ = u.ServiceKey()
	})
}

// FuzzWithParam checks WithParam's promise: whatever key and value are set,
// the URL's String parses back to the same String.
func FuzzWithParam(f *testing.F) {
	f.Add("category", "providers")
	f.Add("k=&;", "v&w;x\ny\xff")
	f.Add(" default.x ", " 1 ")
	f.Fuzz(func(t *testing.T, key, value string) {
		u := MustParse("consumer://10.0.0.9/com.foo.Bar?side=consumer").WithParam(key, value)
		if len(u.String()) > MaxLength {
			return
		}
		again, err := Parse(u.String())
		if err != nil {
			t.Fatalf("WithParam(%q, %q) gave %q, which does not parse: %v", key, value, u, err)
		}
		if again.String() != u.String() {
			t.Fatalf("WithParam(%q, %q) not a fixed point:\n first %q\n again %q", key, value, u, again)
		}
	})
}
