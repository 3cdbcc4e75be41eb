package remoting

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// The compressed registration (RegisterBrokerBody.encode(true)) is a zlib
// stream of big-endian int32-length-prefixed parts:
//
//	DataVersion JSON
//	int32 N, then N topic-config text lines
//	filter-server list JSON
//	from VersionStaticTopics: int32 M, then M TopicQueueMappingInfo JSON
//
// A topic line is "name read write perm filterType", with a sixth token of
// attributes JSON from 5.x; it carries neither topicSysFlag nor order.

func decodeRegisterCompressed(body []byte, brokerVersion, maxInflated int) (*RegisterBrokerBody, error) {
	zr, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, malformed("compressed register body: %v", err)
	}
	// ReadAll grows with the data, so a bomb costs at most maxInflated.
	data, err := io.ReadAll(io.LimitReader(zr, int64(maxInflated)+1))
	if err != nil {
		return nil, malformed("compressed register body: %v", err)
	}
	if len(data) > maxInflated {
		return nil, malformed("compressed register body inflates past the %d-byte cap", maxInflated)
	}
	return parseInflatedRegister(data, brokerVersion)
}

func parseInflatedRegister(data []byte, brokerVersion int) (*RegisterBrokerBody, error) {
	p := parts{b: data}
	rb := &RegisterBrokerBody{}
	dv, err := p.next("data version")
	if err != nil {
		return nil, err
	}
	if err := Unmarshal(dv, &rb.DataVersion); err != nil {
		return nil, malformed("compressed register body: data version: %v", err)
	}
	n, err := p.count("topic", minTopicPart)
	if err != nil {
		return nil, err
	}
	rb.Topics = make(map[string]TopicConfig, min(n, 1024))
	for i := range n {
		line, err := p.next("topic config")
		if err != nil {
			return nil, err
		}
		tc, err := parseTopicLine(string(line))
		if err != nil {
			return nil, malformed("compressed register body: topic %d of %d: %v", i+1, n, err)
		}
		rb.Topics[tc.TopicName] = tc
	}
	fs, err := p.next("filter server list")
	if err != nil {
		return nil, err
	}
	// Java logs and ignores a bad list; the table is what matters.
	_ = Unmarshal(fs, &rb.FilterServers)
	if brokerVersion < VersionStaticTopics || len(p.b) == 0 {
		return rb, nil
	}
	m, err := p.count("queue mapping", minMappingPart)
	if err != nil {
		return nil, err
	}
	if m > 0 {
		rb.QueueMappings = make(map[string]TopicQueueMappingInfo, min(m, 64))
	}
	for range m {
		js, err := p.next("queue mapping")
		if err != nil {
			return nil, err
		}
		var info TopicQueueMappingInfo
		if err := Unmarshal(js, &info); err != nil {
			return nil, malformed("compressed register body: queue mapping: %v", err)
		}
		rb.QueueMappings[info.Topic] = info
	}
	return rb, nil
}

// The fewest bytes an entry can take: a length and "T 1 1 1 X", or "{}".
// A count that the remaining bytes cannot hold is rejected before any
// work is done for it.
const (
	minTopicPart   = 4 + len("T 1 1 1 X")
	minMappingPart = 4 + len("{}")
)

// parts walks the inflated stream; every length is checked against the
// bytes that are actually there.
type parts struct{ b []byte }

func (p *parts) int32(what string) (int, error) {
	if len(p.b) < 4 {
		return 0, malformed("compressed register body ends before the %s length", what)
	}
	n := int32(binary.BigEndian.Uint32(p.b))
	p.b = p.b[4:]
	return int(n), nil
}

func (p *parts) next(what string) ([]byte, error) {
	n, err := p.int32(what)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > len(p.b) {
		return nil, malformed("compressed register body: %s length %d does not fit the %d bytes left", what, n, len(p.b))
	}
	part := p.b[:n]
	p.b = p.b[n:]
	return part, nil
}

// count reads an item count and rejects counts the remaining bytes cannot
// hold at minSize bytes per item.
func (p *parts) count(what string, minSize int) (int, error) {
	n, err := p.int32(what + " count")
	if err != nil {
		return 0, err
	}
	if n < 0 || n > len(p.b)/minSize {
		return 0, malformed("compressed register body: %d %s entries cannot fit the %d bytes left", n, what, len(p.b))
	}
	return n, nil
}

func parseTopicLine(line string) (TopicConfig, error) {
	f := strings.SplitN(line, " ", 6)
	if len(f) < 5 {
		return TopicConfig{}, malformed("topic line %q has %d fields, want 5 or 6", line, len(f))
	}
	tc := TopicConfig{TopicName: f[0], TopicFilterType: f[4]}
	if tc.TopicName == "" {
		return tc, malformed("topic line %q has no topic name", line)
	}
	for i, dst := range []*int{&tc.ReadQueueNums, &tc.WriteQueueNums, &tc.Perm} {
		v, err := strconv.ParseInt(f[1+i], 10, 32)
		if err != nil {
			return tc, malformed("topic line %q: field %d is not an int32", line, 2+i)
		}
		*dst = int(v)
	}
	if len(f) == 6 && f[5] != "" {
		// Java ignores attributes it cannot parse; so do we.
		_ = Unmarshal([]byte(f[5]), &tc.Attributes)
	}
	return tc, nil
}

func encodeRegisterCompressed(b *RegisterBrokerBody, brokerVersion int) ([]byte, error) {
	var raw []byte
	part := func(p []byte) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(p)))
		raw = append(raw, p...)
	}
	part(b.DataVersion.AppendJSON(nil))
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(b.Topics)))
	for _, name := range sortedKeys(b.Topics) {
		tc := b.Topics[name]
		line := tc.TopicName + " " + strconv.Itoa(tc.ReadQueueNums) + " " + strconv.Itoa(tc.WriteQueueNums) +
			" " + strconv.Itoa(tc.Perm) + " " + tc.TopicFilterType
		if brokerVersion >= VersionStaticTopics {
			line += " " + string(appendStringMap(nil, tc.Attributes, false))
		}
		part([]byte(line))
	}
	part(appendStringList(nil, b.FilterServers, false))
	if brokerVersion >= VersionStaticTopics {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(b.QueueMappings)))
		for _, topic := range sortedKeys(b.QueueMappings) {
			js, err := json.Marshal(b.QueueMappings[topic])
			if err != nil {
				return nil, err
			}
			part(js)
		}
	}
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
