package remoting

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// Hand-written JSON output. encoding/json cannot write fastjson's bare
// numeric map keys, and it is several times slower on the header path,
// which every response takes. These helpers only ever produce valid,
// compact JSON text (legacy bare keys aside).

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does, so the output is always valid UTF-8. With
// ascii set, everything outside ASCII is escaped as \uXXXX, like fastjson's
// BrowserCompatible feature that standard-JSON route bodies use.
func appendJSONString(dst []byte, s string, ascii bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			if ascii {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			i++
			start = i
			continue
		}
		if ascii {
			dst = append(dst, s[start:i]...)
			if r >= 0x10000 {
				r -= 0x10000
				dst = appendU4(dst, 0xd800+(r>>10))
				dst = appendU4(dst, 0xdc00+(r&0x3ff))
			} else {
				dst = appendU4(dst, r)
			}
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendKey appends "key": for a property name we know to be plain ASCII.
func appendKey(dst []byte, key string) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendStringMap appends a JSON object of m with sorted keys.
func appendStringMap(dst []byte, m map[string]string, ascii bool) []byte {
	dst = append(dst, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k, ascii)
		dst = append(dst, ':')
		dst = appendJSONString(dst, m[k], ascii)
	}
	return append(dst, '}')
}

// appendStringList appends a JSON array of strings, in the order given.
func appendStringList(dst []byte, list []string, ascii bool) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s, ascii)
	}
	return append(dst, ']')
}

// appendBrokerAddrs appends a brokerId → address map in id order, with the
// ids bare (legacy fastjson) or quoted (standard JSON).
func appendBrokerAddrs(dst []byte, addrs map[int64]string, form JSONForm) []byte {
	var buf [8]int64 // a group rarely has more members: no allocation
	ids := buf[:0]
	for id := range addrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	dst = append(dst, '{')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		if form == LegacyJSON {
			dst = strconv.AppendInt(dst, id, 10)
		} else {
			dst = append(dst, '"')
			dst = strconv.AppendInt(dst, id, 10)
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		dst = appendJSONString(dst, addrs[id], form == StandardJSON)
	}
	return append(dst, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
