package dubbo

import (
	"fmt"
	"maps"
	"net/url"
	"strings"
	"testing"
)

// provider is a typical Dubbo 2.7 provider registration (spec §1.3).
const provider = "dubbo://10.0.0.5:20880/com.foo.BarService?anyhost=true&application=app&dubbo=2.0.2&dynamic=true&interface=com.foo.BarService&methods=a,b&pid=42&side=provider&timestamp=1700000000000&version=1.0.0"

type fields struct {
	protocol, username, password, host string
	port                               int
	path                               string
	params                             map[string]string
}

func fieldsOf(u URL) fields {
	return fields{u.Protocol(), u.Username(), u.Password(), u.Host(), u.Port(), u.Path(), u.Params()}
}

func TestParseFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want fields
	}{
		{"provider", "dubbo://10.0.0.5:20880/com.foo.Bar?interface=com.foo.Bar&version=1.0.0",
			fields{"dubbo", "", "", "10.0.0.5", 20880, "com.foo.Bar", map[string]string{"interface": "com.foo.Bar", "version": "1.0.0"}}},
		{"consumer without port", "consumer://10.0.0.9/com.foo.Bar?category=consumers&check=false",
			fields{"consumer", "", "", "10.0.0.9", 0, "com.foo.Bar", map[string]string{"category": "consumers", "check": "false"}}},
		{"no path", "zookeeper://127.0.0.1:2181",
			fields{"zookeeper", "", "", "127.0.0.1", 2181, "", map[string]string{}}},
		{"no path with query", "zookeeper://127.0.0.1:2181?backup=b:2181",
			fields{"zookeeper", "", "", "127.0.0.1", 2181, "", map[string]string{"backup": "b:2181"}}},
		{"empty path with slash", "dubbo://h:1/?a=1",
			fields{"dubbo", "", "", "h", 1, "", map[string]string{"a": "1"}}},
		{"no host", "file:///home/u/router.js",
			fields{"file", "", "", "", 0, "home/u/router.js", map[string]string{}}},
		{"user and password", "redis://admin:s3:cr@et@10.0.0.1:6379",
			fields{"redis", "admin", "s3:cr@et", "10.0.0.1", 6379, "", map[string]string{}}},
		{"user only", "redis://admin@10.0.0.1:6379",
			fields{"redis", "admin", "", "10.0.0.1", 6379, "", map[string]string{}}},
		{"IPv6 in brackets", "dubbo://[2001:db8::1]:20880/I",
			fields{"dubbo", "", "", "2001:db8::1", 20880, "I", map[string]string{}}},
		{"IPv6 in brackets without port", "dubbo://[::1]/I",
			fields{"dubbo", "", "", "::1", 0, "I", map[string]string{}}},
		{"bare IPv6 with zone and port as Java prints it", "dubbo://fe80:0:0:0:894:aeec:f37d:23e1%en0:20880/I",
			fields{"dubbo", "", "", "fe80:0:0:0:894:aeec:f37d:23e1%en0", 20880, "I", map[string]string{}}},
		{"bare IPv6 with zone, no port", "dubbo://fe80:0:0:0:894:aeec:f37d:23e1%en0/I",
			fields{"dubbo", "", "", "fe80:0:0:0:894:aeec:f37d:23e1%en0", 0, "I", map[string]string{}}},
		{"bare compressed IPv6 is not split at its last colon", "dubbo://fe80::1/I",
			fields{"dubbo", "", "", "fe80::1", 0, "I", map[string]string{}}},
		{"ambiguous bare IPv6 reads as an address, not address:port", "dubbo://fe80::1:20/I",
			fields{"dubbo", "", "", "fe80::1:20", 0, "I", map[string]string{}}},
		{"empty port", "dubbo://h:/I",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{}}},
		{"port zero", "dubbo://h:0/I",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{}}},
		{"trailing white space of the path dropped", "dubbo://h/I\u00a0?a=1",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"a": "1"}}},
		{"path with slashes", "rest://h:80/api/v1/users",
			fields{"rest", "", "", "h", 80, "api/v1/users", map[string]string{}}},
		{"key without = is key=key", "dubbo://h/I?anyhost&a=1",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"anyhost": "anyhost", "a": "1"}}},
		{"semicolon separates too", "dubbo://h/I?a=1;b=2",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"a": "1", "b": "2"}}},
		{"last duplicate wins", "dubbo://h/I?a=1&a=2",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"a": "2"}}},
		{"empty value kept", "dubbo://h/I?group=",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"group": ""}}},
		{"empty key and empty pairs dropped", "dubbo://h/I?=x&&a=1&",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"a": "1"}}},
		{"value keeps '=' after the first", "dubbo://h/I?rule=a=b",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"rule": "a=b"}}},
		{"values are not decoded", "registry://h/R?refer=application%3Dapp%26interface%3DI",
			fields{"registry", "", "", "h", 0, "R", map[string]string{"refer": "application%3Dapp%26interface%3DI"}}},
		{"spaces trimmed", "  dubbo://h/I? a = 1 & b=2  ",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"a": "1", "b": "2"}}},
		{"default. key also sets its alias", "dubbo://h/I?default.version=1.0&default.group=g&group=x",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"default.version": "1.0", "version": "1.0", "default.group": "g", "group": "x"}}},
		{"ZooKeeper node name, encoded once", url.QueryEscape("dubbo://10.0.0.5:20880/com.foo.Bar?interface=com.foo.Bar&methods=a,b"),
			fields{"dubbo", "", "", "10.0.0.5", 20880, "com.foo.Bar", map[string]string{"interface": "com.foo.Bar", "methods": "a,b"}}},
		{"encoded with lower-case hex", "dubbo%3a%2f%2fh%3a1%2fI%3fa%3d1",
			fields{"dubbo", "", "", "h", 1, "I", map[string]string{"a": "1"}}},
		{"encoded '+' is a space, as Java's URLDecoder reads it", "dubbo%3A%2F%2Fh%2FI%3Fname%3Da+b",
			fields{"dubbo", "", "", "h", 0, "I", map[string]string{"name": "a b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			got := fieldsOf(u)
			if got.protocol != tt.want.protocol || got.username != tt.want.username ||
				got.password != tt.want.password || got.host != tt.want.host ||
				got.port != tt.want.port || got.path != tt.want.path || !maps.Equal(got.params, tt.want.params) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `url "" has no protocol: expected protocol://host:port/interface?k=v`},
		{"x", `url "x" has no protocol: expected protocol://host:port/interface?k=v`},
		{"10.0.0.5:20880/com.foo.Bar", `url "10.0.0.5:20880/com.foo.Bar" has no protocol: expected protocol://host:port/interface?k=v`},
		{"://h/I", `url "://h/I" has no protocol: expected protocol://host:port/interface?k=v`},
		{"h/I?ref=dubbo://x", `url "h/I?ref=dubbo://x" has no protocol: expected protocol://host:port/interface?k=v`},
		{"1dubbo://h/I", `url "1dubbo://h/I" has invalid protocol "1dubbo": it must be a letter followed by letters, digits, '+', '-' or '.'`},
		{"dub bo://h/I", `url "dub bo://h/I" has invalid protocol "dub bo": it must be a letter followed by letters, digits, '+', '-' or '.'`},
		{"dubbo://:pw@h/I", `url "dubbo://:pw@h/I" has a password but no username`},
		{"dubbo://h:port/I", `url "dubbo://h:port/I": port "port" is not a number`},
		{"dubbo://h:-1/I", `url "dubbo://h:-1/I": port "-1" is not a number`},
		{"dubbo://h:65536/I", `url "dubbo://h:65536/I": port "65536" is out of range 0-65535`},
		{"dubbo://:20880/I", `url "dubbo://:20880/I": port 20880 is given without a host`},
		{"dubbo://[::1/I", `url "dubbo://[::1/I": host "[::1" opens '[' without a closing ']'`},
		{"dubbo://[10.0.0.1]:1/I", `url "dubbo://[10.0.0.1]:1/I": host [10.0.0.1] is in brackets but is not an IPv6 address`},
		{"dubbo://[::1]x/I", `url "dubbo://[::1]x/I": host [::1] is followed by "x", expected :port`},
		{"dubbo://a:b:c/I", `url "dubbo://a:b:c/I": host "a:b:c" has several ':' but is not an IPv6 address: write IPv6 hosts as [addr]:port`},
		{"dubbo://h]:1/I", `url "dubbo://h]:1/I": host "h]" has a character not allowed in a host ('[', ']' or white space)`},
		{"dubbo://h\u00a0/", `url "dubbo://h\u00a0/": host "h\u00a0" has a character not allowed in a host ('[', ']' or white space)`},
		{"dubbo://h/I?a=1\nb=2", `url "dubbo://h/I?a=1\nb=2" has control character '\n' at byte 15`},
		{"dubbo://h/I?a=\xff", `url "dubbo://h/I?a=\xff" is not valid UTF-8`},
		{"dubbo%3A%2F%2Fh%2FI%3Fa%3D%ZZ", `url "dubbo%3A%2F%2Fh%2FI%3Fa%3D%ZZ" looks percent-encoded but does not decode: invalid URL escape "%ZZ"`},
		{"dubbo%3A%2F%2Fh%2FI%3Fa%3D1%0Ab%3D2", `url "dubbo://h/I?a=1\nb=2" has control character '\n' at byte 15`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error %s", tt.in, tt.want)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("Parse(%q) error\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestParseLimits(t *testing.T) {
	// pad builds a URL of exactly n bytes.
	pad := func(n int) string {
		base := "dubbo://h/I?x="
		return base + strings.Repeat("v", n-len(base))
	}
	if _, err := Parse(pad(MaxLength)); err != nil {
		t.Errorf("URL of MaxLength bytes: %v", err)
	}
	_, err := Parse(pad(MaxLength + 1))
	if want := "url of 8193 bytes is longer than the 8192-byte limit"; err == nil || err.Error() != want {
		t.Errorf("URL of MaxLength+1 bytes: got %v, want %s", err, want)
	}
	// The encoded form of a URL within the limit is accepted even though it
	// is longer than MaxLength itself.
	if _, err := Parse(url.QueryEscape(pad(MaxLength - 100))); err != nil {
		t.Errorf("encoded URL near MaxLength: %v", err)
	}
	if _, err := Parse(strings.Repeat("a", 3*MaxLength+1)); err == nil {
		t.Error("input over 3*MaxLength accepted")
	}
	// Bare keys print as k=k, so a URL can be within the limit as given but
	// not in canonical form; it must be refused, or String would not parse.
	bare := "dubbo://h/I?" + strings.Repeat("k", MaxLength-20)
	_, err = Parse(bare)
	if err == nil || !strings.Contains(err.Error(), "in canonical form, longer than the 8192-byte limit") {
		t.Errorf("canonical form over the limit: got %v", err)
	}

	params := func(n int) string {
		var b strings.Builder
		b.WriteString("dubbo://h/I?")
		for i := range n {
			fmt.Fprintf(&b, "k%x=1&", i)
		}
		return b.String()
	}
	if _, err := Parse(params(MaxParams)); err != nil {
		t.Errorf("%d params: %v", MaxParams, err)
	}
	_, err = Parse(params(MaxParams + 1))
	if err == nil || !strings.HasSuffix(err.Error(), ": query has more than 512 parameters") {
		t.Errorf("%d params: got %v", MaxParams+1, err)
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"x\") did not panic")
		}
	}()
	MustParse("x")
}
