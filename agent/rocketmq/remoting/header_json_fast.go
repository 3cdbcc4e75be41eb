package remoting

import (
	"math"
	"unicode/utf8"
)

// decodeJSONHeaderFast reads the header shapes Java and Go peers actually
// send: known keys once each, integers, strings without escapes, ext values
// that are strings. On anything else it reports false having decided
// nothing, and decodeJSONHeaderSlow, which defines the semantics, takes
// over. FuzzJSONHeader checks that the two agree wherever this one
// answers.
func decodeJSONHeaderFast(h []byte, c *Command) bool {
	s := scanner{b: h}
	var out Command
	const (
		seenCode = 1 << iota
		seenLanguage
		seenVersion
		seenOpaque
		seenFlag
		seenRemark
		seenExt
		seenSerialize
	)
	var seen uint
	s.space()
	if !s.eat('{') {
		return false
	}
	s.space()
	if s.eat('}') {
		return s.end(&out, c)
	}
	for {
		s.space()
		key, ok := s.plainString()
		if !ok {
			return false
		}
		s.space()
		if !s.eat(':') {
			return false
		}
		s.space()
		var bit uint
		switch string(key) {
		case "code":
			bit = seenCode
			n, ok := s.integer(math.MinInt64, math.MaxInt64)
			if !ok {
				return false
			}
			out.Code = int(n)
		case "version":
			bit = seenVersion
			n, ok := s.integer(math.MinInt64, math.MaxInt64)
			if !ok {
				return false
			}
			out.Version = int(n)
		case "opaque":
			bit = seenOpaque
			n, ok := s.integer(math.MinInt32, math.MaxInt32)
			if !ok {
				return false
			}
			out.Opaque = int32(n)
		case "flag":
			bit = seenFlag
			n, ok := s.integer(math.MinInt32, math.MaxInt32)
			if !ok {
				return false
			}
			out.Flag = int32(n)
		case "language":
			bit = seenLanguage
			if s.peek() == '"' {
				name, ok := s.plainString()
				if !ok {
					return false
				}
				out.Language = languageByName(string(name))
			} else {
				n, ok := s.integer(math.MinInt64, math.MaxInt64)
				if !ok {
					return false
				}
				out.Language = languageByNumber(n)
			}
		case "remark":
			bit = seenRemark
			if !s.literal("null") {
				r, ok := s.plainString()
				if !ok {
					return false
				}
				out.Remark = string(r)
			}
		case "extFields":
			bit = seenExt
			if !s.literal("null") && !s.extFields(&out) {
				return false
			}
		case "serializeTypeCurrentRPC":
			bit = seenSerialize
			if _, ok := s.plainString(); !ok {
				return false
			}
		default:
			// encoding/json matches keys case-insensitively; leave any
			// other key to it rather than guess.
			return false
		}
		if seen&bit != 0 {
			return false // duplicates: encoding/json's merge rules apply
		}
		seen |= bit
		s.space()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return s.end(&out, c)
		}
		return false
	}
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(b byte) bool {
	if s.peek() == b {
		s.i++
		return true
	}
	return false
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// end accepts trailing whitespace only, then publishes the result.
func (s *scanner) end(out, c *Command) bool {
	s.space()
	if s.i != len(s.b) {
		return false
	}
	out.SerializeType, out.Body = c.SerializeType, c.Body
	*c = *out
	return true
}

// plainString reads a string literal without escapes or control bytes, in
// valid UTF-8: the only strings whose bytes are their value.
func (s *scanner) plainString() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		b := s.b[s.i]
		switch {
		case b == '"':
			str := s.b[start:s.i]
			s.i++
			return str, ascii || utf8.Valid(str)
		case b == '\\' || b < 0x20:
			return nil, false
		case b >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// integer reads a JSON integer (no fraction or exponent) within [lo, hi].
func (s *scanner) integer(lo, hi int64) (int64, bool) {
	neg := s.eat('-')
	start := s.i
	var n uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if s.i-start >= 18 {
			return 0, false // past what we can add up without overflow checks
		}
		n = n*10 + uint64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	switch s.peek() {
	case '.', 'e', 'E':
		return 0, false
	}
	v := int64(n)
	if neg {
		v = -v
	}
	return v, v >= lo && v <= hi
}

func (s *scanner) extFields(out *Command) bool {
	if !s.eat('{') {
		return false
	}
	m := make(map[string]string, 8)
	s.space()
	if !s.eat('}') {
		for {
			s.space()
			k, ok := s.plainString()
			if !ok {
				return false
			}
			s.space()
			if !s.eat(':') {
				return false
			}
			s.space()
			v, ok := s.plainString()
			if !ok {
				return false
			}
			m[string(k)] = string(v)
			s.space()
			if s.eat(',') {
				continue
			}
			if s.eat('}') {
				break
			}
			return false
		}
	}
	out.ExtFields = m
	return true
}
