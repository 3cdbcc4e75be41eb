package dubbo

import (
	"net/url"
	"testing"
)

// TestStringCanonical checks that String is Dubbo's toFullString with
// parameters in sorted key order, and that it is a fixed point of Parse.
func TestStringCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{provider, provider}, // already canonical
		{"dubbo://h:1/I?b=2&a=1&c=3", "dubbo://h:1/I?a=1&b=2&c=3"},
		{"dubbo://h:1/I?a=1&a=2&a=3", "dubbo://h:1/I?a=3"},
		{"dubbo://h:1/I?b=2;a=1", "dubbo://h:1/I?a=1&b=2"},
		{"dubbo://h:1/I?anyhost", "dubbo://h:1/I?anyhost=anyhost"},
		{"dubbo://h:1/I?&&a=1&=z&", "dubbo://h:1/I?a=1"},
		{"dubbo://h:1/I?", "dubbo://h:1/I"},
		{"dubbo://h:1/?a=1", "dubbo://h:1?a=1"},
		{"dubbo://h:0/I", "dubbo://h/I"},
		{"dubbo://h:020880/I", "dubbo://h:20880/I"},
		{"dubbo://h:/I", "dubbo://h/I"},
		{"dubbo://u:p@h:1/I", "dubbo://u:p@h:1/I"},
		{"dubbo://u:@h:1/I", "dubbo://u@h:1/I"},
		{"dubbo://@h:1/I", "dubbo://h:1/I"},
		{"dubbo://[::1]:1/I", "dubbo://[::1]:1/I"},
		{"dubbo://fe80::1/I", "dubbo://[fe80::1]/I"},
		{"dubbo://fe80:0:0:0:894:aeec:f37d:23e1%en0:20880/I", "dubbo://[fe80:0:0:0:894:aeec:f37d:23e1%en0]:20880/I"},
		{"dubbo://h/I?default.timeout=5", "dubbo://h/I?default.timeout=5&timeout=5"},
		{" \tdubbo://h/I?a= 1 \n", "dubbo://h/I?a=1"},
		{url.QueryEscape("dubbo://h:1/I?b=2&a=1"), "dubbo://h:1/I?a=1&b=2"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("Parse(%q).String()\n got %s\nwant %s", tt.in, got, tt.want)
		}
		again, err := Parse(u.String())
		if err != nil || again.String() != u.String() {
			t.Errorf("Parse(%q) does not round-trip: %v %q", u.String(), err, again.String())
		}
	}
}

// TestIdentity checks that the canonical string is the registration
// identity: URLs that differ only in spelling are one registration, and URLs
// that differ in any parameter are two (RegistryService.register: "URLs that
// differ only in parameters coexist").
func TestIdentity(t *testing.T) {
	same := [][2]string{
		{"dubbo://h:1/I?a=1&b=2", "dubbo://h:1/I?b=2&a=1"},
		{"dubbo://h:1/I?a=1", url.QueryEscape("dubbo://h:1/I?a=1")},
		{"dubbo://[fe80:0:0:0:0:0:0:1]:1/I", "dubbo://fe80:0:0:0:0:0:0:1:1/I"},
		{"dubbo://h:1/I?a=0&a=1", "dubbo://h:1/I?a=1"},
	}
	for _, p := range same {
		if a, b := MustParse(p[0]), MustParse(p[1]); a.String() != b.String() {
			t.Errorf("%q and %q should be one registration: %s vs %s", p[0], p[1], a, b)
		}
	}
	differ := [][2]string{
		{"dubbo://h:1/I?a=1", "dubbo://h:1/I?a=2"},
		{"dubbo://h:1/I?a=1", "dubbo://h:1/I?a=1&b=2"},
		{"dubbo://h:1/I", "dubbo://h:2/I"},
		{"dubbo://h:1/I", "dubbo://u@h:1/I"},
		{"dubbo://h:1/I?A=1", "dubbo://h:1/I?a=1"}, // keys are case-sensitive, as in Dubbo
	}
	for _, p := range differ {
		if a, b := MustParse(p[0]), MustParse(p[1]); a.String() == b.String() {
			t.Errorf("%q and %q should be two registrations", p[0], p[1])
		}
	}
}

func TestAccessors(t *testing.T) {
	tests := []struct {
		in                                          string
		iface, category, group, version, serviceKey string
		dynamic, enabled                            bool
	}{
		{provider, "com.foo.BarService", "providers", "", "1.0.0", "com.foo.BarService:1.0.0", true, true},
		{"dubbo://h/path.Name", "path.Name", "providers", "", "", "path.Name", true, true},
		{"dubbo://h/p?interface=I&group=g&version=2", "I", "providers", "g", "2", "g/I:2", true, true},
		{"dubbo://h/p?interface=&group=g", "p", "providers", "g", "", "g/p", true, true},
		{"dubbo://h?group=g", "", "providers", "g", "", "", true, true},
		{"override://0.0.0.0/I?category=configurators&dynamic=false", "I", "configurators", "", "", "I", false, true},
		{"dubbo://h/I?category=&dynamic=&enabled=", "I", "providers", "", "", "I", true, true},
		{"dubbo://h/I?dynamic=TRUE&enabled=False", "I", "providers", "", "", "I", true, false},
		// Boolean.parseBoolean: anything but "true" is false.
		{"dubbo://h/I?dynamic=yes&enabled=1", "I", "providers", "", "", "I", false, false},
	}
	for _, tt := range tests {
		u := MustParse(tt.in)
		if got := u.Interface(); got != tt.iface {
			t.Errorf("%s Interface() = %q, want %q", tt.in, got, tt.iface)
		}
		if got := u.Category(); got != tt.category {
			t.Errorf("%s Category() = %q, want %q", tt.in, got, tt.category)
		}
		if got := u.Group(); got != tt.group {
			t.Errorf("%s Group() = %q, want %q", tt.in, got, tt.group)
		}
		if got := u.Version(); got != tt.version {
			t.Errorf("%s Version() = %q, want %q", tt.in, got, tt.version)
		}
		if got := u.ServiceKey(); got != tt.serviceKey {
			t.Errorf("%s ServiceKey() = %q, want %q", tt.in, got, tt.serviceKey)
		}
		if got := u.Dynamic(); got != tt.dynamic {
			t.Errorf("%s Dynamic() = %v, want %v", tt.in, got, tt.dynamic)
		}
		if got := u.Enabled(); got != tt.enabled {
			t.Errorf("%s Enabled() = %v, want %v", tt.in, got, tt.enabled)
		}
	}
}

func TestParam(t *testing.T) {
	u := MustParse("dubbo://h/I?a=1&empty=")
	if got := u.Param("a", "d"); got != "1" {
		t.Errorf("Param(a) = %q", got)
	}
	if got := u.Param("empty", "d"); got != "d" {
		t.Errorf("Param(empty) = %q, want the default as Dubbo's getParameter gives", got)
	}
	if got := u.Param("missing", "d"); got != "d" {
		t.Errorf("Param(missing) = %q", got)
	}
	if !u.HasParam("empty") || u.HasParam("missing") {
		t.Error("HasParam disagrees with the query")
	}
	m := u.Params()
	m["a"] = "changed"
	if u.Param("a", "") != "1" {
		t.Error("changing Params() changed the URL")
	}
}

func TestAddress(t *testing.T) {
	for in, want := range map[string]string{
		"dubbo://10.0.0.5:20880/I": "10.0.0.5:20880",
		"consumer://10.0.0.9/I":    "10.0.0.9",
		"dubbo://[::1]:20880/I":    "[::1]:20880",
		"dubbo://fe80::1/I":        "[fe80::1]",
		"file:///x":                "",
	} {
		if got := MustParse(in).Address(); got != want {
			t.Errorf("Address(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestWithParam(t *testing.T) {
	orig := MustParse("dubbo://h/I?b=2")
	u := orig.WithParam("a", " 1 ")
	if got, want := u.String(), "dubbo://h/I?a=1&b=2"; got != want {
		t.Errorf("WithParam = %s, want %s", got, want)
	}
	if orig.String() != "dubbo://h/I?b=2" || orig.HasParam("a") {
		t.Error("WithParam changed the original URL")
	}
	if got := orig.WithParam("", "x"); got.String() != orig.String() {
		t.Errorf("WithParam with an empty key = %s, want unchanged", got)
	}
	if got, want := orig.WithParam("default.x", "1").String(), "dubbo://h/I?b=2&default.x=1&x=1"; got != want {
		t.Errorf("WithParam(default.x) = %s, want %s (Parse would add the alias)", got, want)
	}

	// Separators and control characters are escaped so String parses back
	// to the same URL.
	odd := orig.WithParam("k=&;", "v&w;x\ny\xff")
	want := "dubbo://h/I?b=2&k%3D%26%3B=v%26w%3Bx%0Ay\uFFFD"
	if odd.String() != want {
		t.Errorf("escaped WithParam = %q, want %q", odd.String(), want)
	}
	if again := MustParse(odd.String()); again.String() != odd.String() {
		t.Errorf("escaped WithParam does not round-trip: %s", again)
	}
}

func TestZero(t *testing.T) {
	var u URL
	if !u.IsZero() || u.String() != "" || u.Param("a", "d") != "d" || u.Interface() != "" {
		t.Error("zero URL is not empty")
	}
	if MustParse("dubbo://h/I").IsZero() {
		t.Error("parsed URL reports IsZero")
	}
}
