package remoting

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSONHeader writes the header the way a Java NameServer does:
//
//	{"code":0,"extFields":{...},"flag":1,"language":"JAVA","opaque":7,
//	 "remark":"...","serializeTypeCurrentRPC":"JSON","version":479}
//
// compact, alphabetical, with remark and extFields omitted when empty (Java
// omits them when null) and ext values always strings, which is what the Go
// client's decoder insists on.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	if len(c.ExtFields) > 0 {
		dst = append(dst, `,"extFields":{`...)
		var buf [16]string // typical headers have a handful of fields: no allocation
		keys := buf[:0]
		for k := range c.ExtFields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k, false)
			dst = append(dst, ':')
			dst = appendJSONString(dst, c.ExtFields[k], false)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"language":`...)
	if int(c.Language) < len(languageNames) {
		dst = append(dst, '"')
		dst = append(dst, languageNames[c.Language]...)
		dst = append(dst, '"')
	} else {
		dst = strconv.AppendInt(dst, int64(c.Language), 10)
	}
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	if c.Remark != "" {
		dst = append(dst, `,"remark":`...)
		dst = appendJSONString(dst, c.Remark, false)
	}
	dst = append(dst, `,"serializeTypeCurrentRPC":"JSON","version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	return append(dst, '}')
}

// decodeJSONHeader reads a JSON header. Real peers send one of two shapes
// (Java's, Go's), which a scanner handles without reflection; anything else
// goes to encoding/json, whose reading is the reference for both.
func decodeJSONHeader(h []byte, c *Command) error {
	if decodeJSONHeaderFast(h, c) {
		return nil
	}
	return decodeJSONHeaderSlow(h, c)
}

// jsonHeader is the reference reading of a JSON header. Language, remark
// and ext values stay raw because peers disagree on their JSON types.
type jsonHeader struct {
	Code      int                        `json:"code"`
	Language  json.RawMessage            `json:"language"`
	Version   int                        `json:"version"`
	Opaque    int32                      `json:"opaque"`
	Flag      int32                      `json:"flag"`
	Remark    json.RawMessage            `json:"remark"`
	ExtFields map[string]json.RawMessage `json:"extFields"`
}

func decodeJSONHeaderSlow(h []byte, c *Command) error {
	trimmed := bytes.TrimLeft(h, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return malformed("JSON header is not an object")
	}
	var jh jsonHeader
	if err := json.Unmarshal(QuoteNumericKeys(h), &jh); err != nil {
		return malformed("JSON header: %v", err)
	}
	c.Code, c.Version, c.Opaque, c.Flag = jh.Code, jh.Version, jh.Opaque, jh.Flag
	c.Language = languageFromJSON(jh.Language)
	c.Remark, _ = scalarText(jh.Remark)
	c.ExtFields = nil
	if jh.ExtFields != nil {
		c.ExtFields = make(map[string]string, len(jh.ExtFields))
		for k, raw := range jh.ExtFields {
			if v, ok := scalarText(raw); ok {
				c.ExtFields[k] = v
			}
		}
	}
	return nil
}

// languageFromJSON accepts the name (Java, Go) or the ordinal (some
// third-party clients); missing or null means JAVA, Java's own default.
func languageFromJSON(raw json.RawMessage) LanguageCode {
	if len(raw) == 0 || string(raw) == "null" {
		return LanguageJava
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return languageByName(s)
		}
		return LanguageOther
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return LanguageOther
	}
	return languageByNumber(n)
}

// scalarText turns a JSON value into the string Java's fastjson would have
// stored in a String field: strings unquoted, numbers and booleans as their
// text, objects and arrays as compact JSON. Null reports false: Java skips
// null header fields.
func scalarText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	switch raw[0] {
	case '"':
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner), true
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return "", false
	case '{', '[':
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.String(), true
		}
	}
	return string(raw), true
}
