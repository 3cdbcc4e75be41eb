package dubbo

import (
	"fmt"
	"strings"
)

// parseQuery reads the part after '?' the way Dubbo's URL parser does:
// pairs are separated by '&' or ';', a pair without '=' is key=key, the last
// duplicate wins and empty keys are dropped (Dubbo never prints them).
func parseQuery(q string) (map[string]string, error) {
	m := make(map[string]string)
	for q != "" {
		var part string
		if i := strings.IndexAny(q, "&;"); i >= 0 {
			part, q = q[:i], q[i+1:]
		} else {
			part, q = q, ""
		}
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok {
			v = k
		}
		if k == "" {
			continue
		}
		m[k] = strings.TrimSpace(v)
		// Checked inside the loop so a flood of distinct keys is refused
		// before it is stored, not after.
		if len(m) > MaxParams {
			return nil, fmt.Errorf("query has more than %d parameters", MaxParams)
		}
	}
	addDefaultAliases(m)
	if len(m) > MaxParams {
		return nil, fmt.Errorf("query has more than %d parameters", MaxParams)
	}
	return m, nil
}

// addDefaultAliases gives every "default.k" key its alias k unless k is set,
// the compatibility rule Dubbo applies to URLs from versions before 2.7.
func addDefaultAliases(m map[string]string) {
	for k, v := range m {
		// An alias with edge spaces would be trimmed on the next parse into
		// another key, so the canonical form would not parse back to itself.
		if alias, ok := strings.CutPrefix(k, defaultKeyPrefix); ok && alias != "" && strings.TrimSpace(alias) == alias {
			if _, set := m[alias]; !set {
				m[alias] = v
			}
		}
	}
}

// escapeParam percent-escapes the bytes the raw form cannot carry in a key
// (where '=' also ends the key) or a value, so that a URL built in code still
// parses back to itself; invalid UTF-8 becomes U+FFFD for the same reason.
// '%' itself is left alone: Dubbo never decodes values, so escaping it would
// only change them.
func escapeParam(s string, isKey bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	needs := func(c byte) bool {
		return c == '&' || c == ';' || c < 0x20 || c == 0x7f || (isKey && c == '=')
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case needs(c):
			if b.Len() == 0 {
				b.WriteString(s[:i])
			}
			fmt.Fprintf(&b, "%%%02X", c)
		case b.Len() > 0:
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		return s
	}
	return b.String()
}
