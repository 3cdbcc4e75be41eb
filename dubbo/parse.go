package dubbo

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what Parse accepts. They bound the work one untrusted string can
// cause; real registrations are far smaller (a multicast datagram is at most
// 2048 bytes in Dubbo).
const (
	// MaxLength is the longest URL, in bytes, both as given (after any
	// percent-decoding) and in canonical form. An encoded URL may be up to
	// three times longer, since each encoded byte takes three.
	MaxLength = 8 << 10
	// MaxParams is the most distinct parameters a URL may carry.
	MaxParams = 512
)

// shape is what every error about a malformed URL reminds the caller of.
const shape = "expected protocol://host:port/interface?k=v"

// encodedScheme is "://" after one round of URL-encoding: ZooKeeper and
// other path-based registries store each URL encoded once
// (/dubbo/<iface>/providers/dubbo%3A%2F%2F10.0.0.5%3A20880%2F...).
const encodedScheme = "%3a%2f%2f"

// Parse reads a Dubbo URL in its raw form (dubbo://host:port/iface?k=v) or
// encoded once as Dubbo stores it in registry paths (dubbo%3A%2F%2Fhost...).
// Surrounding whitespace is ignored, parameters are split on '&' and ';',
// keys and values are trimmed, a key without '=' gets itself as value, the
// last of duplicate keys wins and "default.k" also sets k when k is absent,
// all as Dubbo's parser does. Values are kept as given, not percent-decoded,
// because Dubbo treats them as opaque and prints them back unchanged.
//
// Hosts may be IPv6 literals in brackets, or bare with at least two colons
// as Java prints them (fe80:0:0:0:1:2:3:4%eth0:20880); a missing port is 0
// and the path may be empty.
func Parse(s string) (URL, error) {
	if len(s) > 3*MaxLength {
		return URL{}, fmt.Errorf("url of %d bytes is longer than the %d-byte limit", len(s), MaxLength)
	}
	raw := strings.TrimSpace(s)
	if isEncoded(raw) {
		dec, err := url.QueryUnescape(raw)
		if err != nil {
			return URL{}, fmt.Errorf("url %s looks percent-encoded but does not decode: %v", quote(raw), err)
		}
		raw = strings.TrimSpace(dec)
	}
	if len(raw) > MaxLength {
		return URL{}, fmt.Errorf("url of %d bytes is longer than the %d-byte limit", len(raw), MaxLength)
	}
	if err := checkChars(raw); err != nil {
		return URL{}, err
	}
	return parseRaw(raw)
}

// MustParse is Parse for URLs known to be valid, such as constants in tests;
// it panics on error.
func MustParse(s string) URL {
	u, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// isEncoded tells the once-encoded form from the raw one: only the encoded
// form has an escaped "://" and no literal one.
func isEncoded(s string) bool {
	if strings.Contains(s, "://") {
		return false
	}
	return strings.Contains(strings.ToLower(s), encodedScheme)
}

// checkChars rejects bytes that would make the canonical string ambiguous
// for other tools: invalid UTF-8 changes when carried in JSON, and control
// characters break the one-line multicast and cache-file formats.
func checkChars(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("url %s is not valid UTF-8", quote(s))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("url %s has control character %q at byte %d", quote(s), c, i)
		}
	}
	return nil
}

func parseRaw(s string) (URL, error) {
	body, query, _ := strings.Cut(s, "?")
	proto, rest, ok := strings.Cut(body, "://")
	if !ok || proto == "" {
		return URL{}, fmt.Errorf("url %s has no protocol: %s", quote(s), shape)
	}
	if !validProtocol(proto) {
		return URL{}, fmt.Errorf("url %s has invalid protocol %q: it must be a letter followed by letters, digits, '+', '-' or '.'", quote(s), proto)
	}
	u := URL{protocol: proto}
	authority, path, _ := strings.Cut(rest, "/")
	// Trailing white space would be lost when the canonical form ends with
	// the path and is trimmed on the next Parse, so it is dropped here.
	u.path = strings.TrimRightFunc(path, unicode.IsSpace)
	hostport := authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		u.username, u.password, _ = strings.Cut(authority[:i], ":")
		hostport = authority[i+1:]
	}
	if u.username == "" && u.password != "" {
		return URL{}, fmt.Errorf("url %s has a password but no username", quote(s))
	}
	var err error
	if u.host, u.port, err = splitHostPort(hostport); err != nil {
		return URL{}, fmt.Errorf("url %s: %w", quote(s), err)
	}
	m, err := parseQuery(query)
	if err != nil {
		return URL{}, fmt.Errorf("url %s: %w", quote(s), err)
	}
	u.params = sortedParams(m)
	u.full = u.build()
	// The canonical form can outgrow the input (a bare key k prints as k=k),
	// and it must itself parse, so the limit applies to it as well.
	if len(u.full) > MaxLength {
		return URL{}, fmt.Errorf("url %s is %d bytes in canonical form, longer than the %d-byte limit", quote(s), len(u.full), MaxLength)
	}
	return u, nil
}

func validProtocol(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if i == 0 && !letter {
			return false
		}
		if !letter && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// quote shows a URL in an error without flooding logs with 8 KiB of it.
func quote(s string) string {
	const max = 96
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
