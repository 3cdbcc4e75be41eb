package dubbo

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// URL is one parsed Dubbo URL:
//
//	protocol://[username[:password]@]host[:port][/path][?key=value&...]
//
// The zero URL is not a valid registration; get URLs from Parse or MustParse.
// A URL is immutable and safe to share between goroutines.
type URL struct {
	protocol string
	username string
	password string
	host     string // without IPv6 brackets
	port     int    // 0 when absent
	path     string // without the leading '/'
	params   []param
	full     string // canonical form, computed once because it is the identity
}

// param is one key=value pair; URL.params is sorted by key with unique keys,
// which is both the canonical output order and what Param searches.
type param struct{ key, value string }

// Protocol is the scheme, e.g. "dubbo", "consumer", "override" or "empty".
func (u URL) Protocol() string { return u.protocol }

// Username is the user part of the authority, or "".
func (u URL) Username() string { return u.username }

// Password is the password part of the authority, or "".
func (u URL) Password() string { return u.password }

// Host is the host without IPv6 brackets (IPv6 zones kept), or "".
func (u URL) Host() string { return u.host }

// Port is the port, or 0 when the URL has none (consumer URLs).
func (u URL) Port() int { return u.port }

// Path is the path without its leading '/', normally the interface name.
func (u URL) Path() string { return u.path }

// Address is host:port as a dialer wants it, with IPv6 brackets; the port is
// left out when the URL has none.
func (u URL) Address() string {
	h := u.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if u.port == 0 {
		return h
	}
	return h + ":" + strconv.Itoa(u.port)
}

// Param returns the value of key, or def when the key is absent or its value
// is empty. Empty counts as absent because Dubbo's getParameter does the same.
func (u URL) Param(key, def string) string {
	if v, ok := u.lookup(key); ok && v != "" {
		return v
	}
	return def
}

// HasParam reports whether key is present, even with an empty value.
func (u URL) HasParam(key string) bool {
	_, ok := u.lookup(key)
	return ok
}

// Params returns a copy of the parameters; changing it does not change u.
func (u URL) Params() map[string]string {
	m := make(map[string]string, len(u.params))
	for _, p := range u.params {
		m[p.key] = p.value
	}
	return m
}

func (u URL) lookup(key string) (string, bool) {
	i, ok := slices.BinarySearchFunc(u.params, key, func(p param, k string) int {
		return strings.Compare(p.key, k)
	})
	if !ok {
		return "", false
	}
	return u.params[i].value, true
}

// String is the canonical full form (Dubbo's toFullString): credentials
// included, parameters sorted by key, values unencoded. Two URLs denote the
// same registration exactly when their Strings are equal.
func (u URL) String() string { return u.full }

// IsZero reports whether u is the zero URL.
func (u URL) IsZero() bool { return u.full == "" }

// WithParam returns a copy of u with key set to value (trimmed, as Parse
// trims). The raw Dubbo form cannot carry '&' or ';' in a key or value, nor
// '=' in a key, nor control characters, so WithParam percent-escapes them:
// the result survives a String/Parse round trip as long as it stays within
// MaxLength and MaxParams. An empty key leaves u unchanged, as Dubbo drops
// such parameters when printing.
func (u URL) WithParam(key, value string) URL {
	key = escapeParam(strings.TrimSpace(key), true)
	value = escapeParam(strings.TrimSpace(value), false)
	if key == "" {
		return u
	}
	m := u.Params()
	m[key] = value
	addDefaultAliases(m)
	u.params = sortedParams(m)
	u.full = u.build()
	return u
}

// sortedParams turns a parameter map into URL.params order.
func sortedParams(m map[string]string) []param {
	ps := make([]param, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ps = append(ps, param{k, m[k]})
	}
	return ps
}

// build writes the canonical form, mirroring Dubbo's buildString(true, true).
func (u URL) build() string {
	var b strings.Builder
	b.WriteString(u.protocol)
	b.WriteString("://")
	if u.username != "" {
		b.WriteString(u.username)
		if u.password != "" {
			b.WriteByte(':')
			b.WriteString(u.password)
		}
		b.WriteByte('@')
	}
	b.WriteString(u.Address())
	if u.path != "" {
		b.WriteByte('/')
		b.WriteString(u.path)
	}
	for i, p := range u.params {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p.key)
		b.WriteByte('=')
		b.WriteString(p.value)
	}
	return b.String()
}
