package resp

import "strconv"

// The reply builders append one RESP2 value to b and return it.

// Simple is a simple string: +OK.
func Simple(b []byte, s string) []byte { return append(append(append(b, '+'), s...), "\r\n"...) }

// Err is an error reply; msg starts with its code (ERR, WRONGPASS, ...).
// Line breaks in msg become spaces, as Redis makes them.
func Err(b []byte, msg string) []byte {
	b = append(b, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, "\r\n"...)
}

// Int is an integer reply.
func Int(b []byte, n int64) []byte {
	return append(strconv.AppendInt(append(b, ':'), n, 10), "\r\n"...)
}

// Bulk is a bulk string.
func Bulk(b []byte, s string) []byte {
	b = strconv.AppendInt(append(b, '$'), int64(len(s)), 10)
	return append(append(append(b, "\r\n"...), s...), "\r\n"...)
}

// NullBulk is the null bulk string ($-1): a missing value.
func NullBulk(b []byte) []byte { return append(b, "$-1\r\n"...) }

// Array starts an array of n elements, which follow.
func Array(b []byte, n int) []byte {
	return append(strconv.AppendInt(append(b, '*'), int64(n), 10), "\r\n"...)
}

// NullArray is the null array (*-1).
func NullArray(b []byte) []byte { return append(b, "*-1\r\n"...) }

// Bulks is an array of bulk strings.
func Bulks(b []byte, ss []string) []byte {
	b = Array(b, len(ss))
	for _, s := range ss {
		b = Bulk(b, s)
	}
	return b
}
