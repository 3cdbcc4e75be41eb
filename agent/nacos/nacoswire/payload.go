package nacoswire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// Bounds of a decoded Payload, beyond MaxMessage for the whole.
const (
	// MaxHeaders bounds Metadata.headers: clients send a handful (app,
	// accessToken, signatures, client version).
	MaxHeaders = 64
	// MaxString bounds the type, the client IP and each header key and value.
	MaxString = 4096
)

// Payload is nacos_grpc_service.proto's Payload with Metadata flattened:
// Type names the JSON body's class, Body is Any.value.
type Payload struct {
	Type     string
	ClientIP string
	Headers  map[string]string
	Body     []byte
}

// Protobuf field numbers and wire types (nacos_grpc_service.proto).
const (
	fieldPayloadMetadata = 2
	fieldPayloadBody     = 3
	fieldMetaType        = 3
	fieldMetaHeaders     = 7
	fieldMetaClientIP    = 8
	fieldAnyTypeURL      = 1
	fieldAnyValue        = 2
	fieldEntryKey        = 1
	fieldEntryValue      = 2

	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// Marshal encodes p as protobuf, deterministically: fields in number order
// and headers sorted by key, as Go's protobuf does with Deterministic set.
func (p *Payload) Marshal() []byte {
	var meta []byte
	meta = appendString(meta, fieldMetaType, p.Type)
	for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
		var e []byte
		e = appendString(e, fieldEntryKey, k)
		e = appendString(e, fieldEntryValue, p.Headers[k])
		meta = appendBytes(meta, fieldMetaHeaders, e)
	}
	meta = appendString(meta, fieldMetaClientIP, p.ClientIP)
	var any []byte
	if len(p.Body) > 0 {
		any = appendBytes(any, fieldAnyValue, p.Body)
	}
	out := make([]byte, 0, len(meta)+len(any)+16)
	out = appendBytes(out, fieldPayloadMetadata, meta)
	return appendBytes(out, fieldPayloadBody, any)
}

// Unmarshal decodes a Payload. Unknown fields are skipped, as protobuf
// requires; a repeated message field merges, a repeated scalar's last value
// wins. It fails on malformed protobuf, strings that are not UTF-8 (proto3
// strings must be) and anything past this file's bounds.
func Unmarshal(b []byte) (*Payload, error) {
	if len(b) > MaxMessage {
		return nil, fmt.Errorf("%w: payload of %d bytes, limit %d", ErrTooLarge, len(b), MaxMessage)
	}
	p := &Payload{}
	err := fields(b, func(num int, wt int, v []byte) error {
		switch {
		case num == fieldPayloadMetadata && wt == wireBytes:
			return p.unmarshalMeta(v)
		case num == fieldPayloadBody && wt == wireBytes:
			return fields(v, func(num, wt int, v []byte) error {
				if num == fieldAnyValue && wt == wireBytes {
					p.Body = v
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Payload) unmarshalMeta(b []byte) error {
	return fields(b, func(num, wt int, v []byte) error {
		if wt != wireBytes {
			return nil
		}
		switch num {
		case fieldMetaType:
			s, err := str("type", v)
			p.Type = s
			return err
		case fieldMetaClientIP:
			s, err := str("clientIp", v)
			p.ClientIP = s
			return err
		case fieldMetaHeaders:
			var k, val string
			err := fields(v, func(num, wt int, v []byte) error {
				var err error
				switch {
				case num == fieldEntryKey && wt == wireBytes:
					k, err = str("header key", v)
				case num == fieldEntryValue && wt == wireBytes:
					val, err = str("header value", v)
				}
				return err
			})
			if err != nil {
				return err
			}
			if p.Headers == nil {
				p.Headers = map[string]string{}
			}
			if _, dup := p.Headers[k]; !dup && len(p.Headers) >= MaxHeaders {
				return fmt.Errorf("nacoswire: more than %d metadata headers", MaxHeaders)
			}
			p.Headers[k] = val
		}
		return nil
	})
}

func str(what string, v []byte) (string, error) {
	if len(v) > MaxString {
		return "", fmt.Errorf("nacoswire: %s of %d bytes, limit %d", what, len(v), MaxString)
	}
	if !utf8.Valid(v) {
		return "", fmt.Errorf("nacoswire: %s is not valid UTF-8", what)
	}
	return string(v), nil
}

var errTruncated = errors.New("nacoswire: truncated protobuf field")

// fields calls fn for each field of a protobuf message; v is the value's
// bytes for length-delimited fields and nil for others.
func fields(b []byte, fn func(num, wt int, v []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errTruncated
		}
		b = b[n:]
		num, wt := key>>3, int(key&7)
		if num == 0 || num > 1<<29-1 {
			return fmt.Errorf("nacoswire: invalid protobuf field number %d", num)
		}
		var v []byte
		switch wt {
		case wireVarint:
			_, n := binary.Uvarint(b)
			if n <= 0 {
				return errTruncated
			}
			b = b[n:]
		case wireFixed64, wireFixed32:
			size := 8
			if wt == wireFixed32 {
				size = 4
			}
			if len(b) < size {
				return errTruncated
			}
			b = b[size:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errTruncated
			}
			v = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return fmt.Errorf("nacoswire: unsupported protobuf wire type %d", wt)
		}
		if err := fn(int(num), wt, v); err != nil {
			return err
		}
	}
	return nil
}

func appendBytes(dst []byte, num int, v []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(num)<<3|wireBytes)
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}

// appendString leaves out empty strings, as proto3 does.
func appendString(dst []byte, num int, s string) []byte {
	if s == "" {
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(num)<<3|wireBytes)
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
