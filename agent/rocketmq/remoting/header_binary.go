package remoting

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// The ROCKETMQ binary header (§1.4):
//
//	int16 code, int8 language, int16 version, int32 opaque, int32 flag,
//	int32 remarkLength, remark,
//	int32 extLength, then until extLength bytes are used:
//	    int16 keyLength, key, int32 valueLength, value
//
// A zero length stands for Java's null, which we read as "".
const binaryFixedLength = 21

func decodeBinaryHeader(h []byte, c *Command) error {
	if len(h) < binaryFixedLength {
		return malformed("binary header of %d bytes is shorter than its %d-byte fixed part", len(h), binaryFixedLength)
	}
	c.Code = int(int16(binary.BigEndian.Uint16(h[0:])))
	c.Language = LanguageCode(h[2])
	c.Version = int(int16(binary.BigEndian.Uint16(h[3:])))
	c.Opaque = int32(binary.BigEndian.Uint32(h[5:]))
	c.Flag = int32(binary.BigEndian.Uint32(h[9:]))
	rest := h[13:]
	remark, rest, err := cutInt32String(rest, "remark")
	if err != nil {
		return err
	}
	c.Remark = remark
	if len(rest) < 4 {
		return malformed("binary header ends before the ext-fields length")
	}
	elen := int32(binary.BigEndian.Uint32(rest))
	rest = rest[4:]
	if elen < 0 || int(elen) > len(rest) {
		return malformed("ext-fields length %d does not fit the %d header bytes left", elen, len(rest))
	}
	// Java ignores header bytes after the ext fields; so do we.
	ext := rest[:elen]
	if len(ext) > 0 {
		// Each entry takes at least 6 bytes: size the map by that, not by
		// anything the peer claims.
		c.ExtFields = make(map[string]string, min(len(ext)/6, 64))
	}
	for len(ext) > 0 {
		if len(ext) < 2 {
			return malformed("ext fields end inside a key length")
		}
		klen := int16(binary.BigEndian.Uint16(ext))
		ext = ext[2:]
		if klen < 0 || int(klen) > len(ext) {
			return malformed("ext key length %d does not fit the %d ext bytes left", klen, len(ext))
		}
		key := string(ext[:klen])
		val, next, err := cutInt32String(ext[klen:], "ext value of "+key)
		if err != nil {
			return err
		}
		c.ExtFields[key] = val
		ext = next
	}
	return nil
}

// cutInt32String reads an int32-length-prefixed string from the front of b.
func cutInt32String(b []byte, what string) (string, []byte, error) {
	if len(b) < 4 {
		return "", nil, malformed("binary header ends before the %s length", what)
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n < 0 || int(n) > len(b) {
		return "", nil, malformed("%s length %d does not fit the %d bytes left", what, n, len(b))
	}
	return string(b[:n]), b[n:], nil
}

func appendBinaryHeader(dst []byte, c *Command) ([]byte, error) {
	if c.Code < math.MinInt16 || c.Code > math.MaxInt16 {
		return dst, fmt.Errorf("code %d does not fit the binary header's int16", c.Code)
	}
	if c.Version < math.MinInt16 || c.Version > math.MaxInt16 {
		return dst, fmt.Errorf("version %d does not fit the binary header's int16", c.Version)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Code)))
	dst = append(dst, byte(c.Language))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(c.Version)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)

	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	// Sorted so that equal commands encode to equal bytes.
	keys := make([]string, 0, len(c.ExtFields))
	for k := range c.ExtFields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := c.ExtFields[k]
		if len(k) > math.MaxInt16 {
			return dst, fmt.Errorf("ext key of %d bytes does not fit the binary header's int16 length", len(k))
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
		dst = append(dst, k...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	elen := len(dst) - lenAt - 4
	if elen > math.MaxInt32 || len(c.Remark) > math.MaxInt32 {
		return dst, fmt.Errorf("binary header fields exceed their int32 lengths")
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(elen))
	return dst, nil
}
