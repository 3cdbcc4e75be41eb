package redis

import "testing"

// matchRef is the plain recursive reading of Redis' glob, exponential in
// the stars: the reference Match's one-backtrack loop is checked against.
func matchRef(p, s string) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if matchRef(p[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && matchRef(p[1:], s[1:])
	case '[':
		if s == "" {
			return false
		}
		rest, ok := matchSet(p[1:], s[0])
		return ok && matchRef(rest, s[1:])
	case '\\':
		if len(p) >= 2 {
			return s != "" && p[1] == s[0] && matchRef(p[2:], s[1:])
		}
	}
	return s != "" && p[0] == s[0] && matchRef(p[1:], s[1:])
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"/dubbo/*", "/dubbo/com.foo.Bar/providers", true}, // '*' crosses '/'
		{"/dubbo/com.foo.Bar/*", "/dubbo/com.foo.Bar/providers", true},
		{"/dubbo/com.foo.Bar/*", "/dubbo/com.foo.Baz/providers", false},
		{"*", "", true}, {"?", "", false}, {"a?c", "abc", true}, {"[a-c]x", "bx", true}, {"[c-a]x", "bx", true},
		{"[^a]x", "ax", false}, {"[^a]x", "bx", true}, {"\\*", "*", true}, {"\\*", "a", false}, {"a[", "a", false},
		{"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	} {
		if got := Match(c.p, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

// FuzzMatch: the one-backtrack Match agrees with the recursive reading.
func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{{"/dubbo/*", "/dubbo/x/providers"}, {"a*b?c", "axxbyc"}, {"[a-c]*\\?", "b?"}, {"*[^x]", "yx"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		if len(p) > 12 || len(s) > 16 {
			return
		}
		if got, want := Match(p, s), matchRef(p, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, the recursive reading says %v", p, s, got, want)
		}
	})
}
