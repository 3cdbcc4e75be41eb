package remoting

import "encoding/json"

// QuoteNumericKeys makes fastjson output readable by encoding/json (§3.1).
// fastjson writes maps with non-string keys, such as broker ids, as
// {0:"a",1:"b"}; this quotes every bare -?[0-9]+ token that directly
// follows '{' or ',' (whitespace aside) and is itself followed by ':'.
// Bytes inside string literals are never touched.
//
// It accepts any bytes: input that is not JSON comes out no more broken
// than it went in. Valid JSON, which cannot contain a bare key, comes back
// as the same slice without allocating, so callers may apply it to every
// inbound body.
func QuoteNumericKeys(b []byte) []byte {
	var out []byte // nil until the first rewrite
	copied := 0    // b[:copied] is already in out
	inString := false
	var prev byte // last byte outside strings other than whitespace
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++ // whatever is escaped cannot end the string
			case '"':
				inString = false
				prev = c
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
			continue
		}
		if (prev == '{' || prev == ',') && (c == '-' || isDigit(c)) {
			if end, ok := bareKeyEnd(b, i); ok {
				if out == nil {
					out = make([]byte, 0, len(b)+16)
				}
				out = append(out, b[copied:i]...)
				out = append(out, '"')
				out = append(out, b[i:end]...)
				out = append(out, '"')
				copied = end
				prev = '"'
				i = end - 1
				continue
			}
		}
		prev = c
	}
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

// bareKeyEnd reports where the -?[0-9]+ token at b[i] ends if a ':'
// follows it.
func bareKeyEnd(b []byte, i int) (int, bool) {
	j := i
	if b[j] == '-' {
		j++
	}
	end := j
	for end < len(b) && isDigit(b[end]) {
		end++
	}
	if end == j {
		return 0, false
	}
	k := end
	for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r' || b[k] == '\n') {
		k++
	}
	return end, k < len(b) && b[k] == ':'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Unmarshal decodes a body as Java peers send it: QuoteNumericKeys, then
// encoding/json. Use it for every inbound JSON body.
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(QuoteNumericKeys(data), v)
}
