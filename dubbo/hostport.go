package dubbo

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// splitHostPort reads the host[:port] part of a URL. Dubbo itself splits at
// the last ':' unless a '%' (an IPv6 zone) follows it; namecast accepts the
// same strings but decides with a real IPv6 check, so that a bare IPv6 host
// without a port ("fe80::1") is not misread as host "fe80:" and port 1.
func splitHostPort(hp string) (host string, port int, err error) {
	switch {
	case hp == "":
		return "", 0, nil
	case hp[0] == '[':
		host, port, err = splitBracketed(hp)
	case strings.Count(hp, ":") >= 2:
		host, port, err = splitBareIPv6(hp)
	default:
		h, p, _ := strings.Cut(hp, ":")
		if strings.ContainsAny(h, "[]") || strings.ContainsFunc(h, unicode.IsSpace) {
			return "", 0, fmt.Errorf("host %q has a character not allowed in a host ('[', ']' or white space)", h)
		}
		host = h
		port, err = parsePort(p)
	}
	if err != nil {
		return "", 0, err
	}
	if host == "" && port != 0 {
		// Dubbo would silently drop such a port when printing the URL.
		return "", 0, fmt.Errorf("port %d is given without a host", port)
	}
	return host, port, nil
}

// splitBracketed reads "[v6]" or "[v6]:port".
func splitBracketed(hp string) (string, int, error) {
	end := strings.IndexByte(hp, ']')
	if end < 0 {
		return "", 0, fmt.Errorf("host %q opens '[' without a closing ']'", hp)
	}
	host, after := hp[1:end], hp[end+1:]
	if !isIPv6(host) {
		return "", 0, fmt.Errorf("host [%s] is in brackets but is not an IPv6 address", host)
	}
	if after == "" {
		return host, 0, nil
	}
	if after[0] != ':' {
		return "", 0, fmt.Errorf("host [%s] is followed by %q, expected :port", host, after)
	}
	port, err := parsePort(after[1:])
	return host, port, err
}

// splitBareIPv6 reads an unbracketed IPv6 host, as Java's getHostAddress
// prints it, with or without a trailing ":port".
func splitBareIPv6(hp string) (string, int, error) {
	if isIPv6(hp) {
		return hp, 0, nil
	}
	i := strings.LastIndexByte(hp, ':')
	host := hp[:i]
	if !isIPv6(host) {
		return "", 0, fmt.Errorf("host %q has several ':' but is not an IPv6 address: write IPv6 hosts as [addr]:port", hp)
	}
	port, err := parsePort(hp[i+1:])
	return host, port, err
}

// isIPv6 accepts an IPv6 literal with an optional zone. netip allows any
// byte in a zone, so a zone holding ':' (really a ":port"), brackets or
// white space is refused here.
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && !strings.ContainsAny(a.Zone(), ":[]") &&
		!strings.ContainsFunc(a.Zone(), unicode.IsSpace)
}

// parsePort reads a decimal port; "" means no port. Signs, spaces and
// values past 65535 are refused rather than wrapped or ignored.
func parsePort(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, fmt.Errorf("port %q is out of range 0-65535", s)
		}
	}
	return n, nil
}
