package remoting

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
)

// REGISTER_BROKER bodies (§3.5). A broker sends its whole topic table as
// JSON or as a zlib stream of length-prefixed parts; 5.x brokers put
// compressed=false in the header either way, so the decoder goes by the
// body's first bytes, never the header.

// DefaultMaxInflated bounds a compressed registration once inflated: a
// register body is bounded by the frame cap, but a zlib stream can expand a
// thousandfold.
const DefaultMaxInflated = 64 << 20

// TopicConfig is one topic as its broker configures it.
type TopicConfig struct {
	TopicName       string            `json:"topicName"`
	ReadQueueNums   int               `json:"readQueueNums"`
	WriteQueueNums  int               `json:"writeQueueNums"`
	Perm            int               `json:"perm"`
	TopicFilterType string            `json:"topicFilterType"` // SINGLE_TAG or MULTI_TAG
	TopicSysFlag    int               `json:"topicSysFlag"`    // 0 from compressed bodies
	Order           bool              `json:"order"`           // false from compressed bodies
	Attributes      map[string]string `json:"attributes"`
}

// TopicQueueMappingInfo describes a 5.x static topic's logical queues on one
// broker. The NameServer only stores and relays it.
type TopicQueueMappingInfo struct {
	Topic       string          `json:"topic"`
	Scope       string          `json:"scope"`
	TotalQueues int             `json:"totalQueues"`
	Bname       string          `json:"bname"`
	Epoch       int64           `json:"epoch"`
	Dirty       bool            `json:"dirty"`
	CurrIDMap   map[int32]int32 `json:"currIdMap"`
}

// RegisterBrokerBody is a decoded registration: the broker's topic table
// and the version that says whether it changed since the last one.
type RegisterBrokerBody struct {
	DataVersion DataVersion
	// Topics is never nil after decoding. With split registration (5.x,
	// enableSplitRegistration) a broker sends its table in chunks under one
	// DataVersion: merge per topic, never treat one body as the full set.
	Topics        map[string]TopicConfig
	FilterServers []string
	// MappingDataVersion and QueueMappings are for 5.x static topics. Java's
	// compressed layout carries no MappingDataVersion.
	MappingDataVersion DataVersion
	QueueMappings      map[string]TopicQueueMappingInfo
}

// The JSON shape, as fastjson writes RegisterBrokerBody.
type registerBodyJSON struct {
	FilterServerList []string           `json:"filterServerList"`
	Wrapper          topicConfigWrapper `json:"topicConfigSerializeWrapper"`
}

type topicConfigWrapper struct {
	DataVersion        DataVersion            `json:"dataVersion"`
	MappingDataVersion *DataVersion           `json:"mappingDataVersion,omitempty"`
	TopicConfigTable   map[string]TopicConfig `json:"topicConfigTable"`
	// Pointers, so that a 5.x body writes them even empty, as Java does,
	// and a 4.x body leaves them out.
	MappingDetails *map[string]json.RawMessage       `json:"topicQueueMappingDetailMap,omitempty"`
	MappingInfos   *map[string]TopicQueueMappingInfo `json:"topicQueueMappingInfoMap,omitempty"`
}

// DecodeRegisterBrokerBody decodes a REGISTER_BROKER body sent by a broker
// of protocol version brokerVersion (the request's Command.Version).
// Compressed bodies may inflate to at most maxInflated bytes (<= 0 means
// DefaultMaxInflated). An empty body is an empty table, as in Java.
func DecodeRegisterBrokerBody(body []byte, brokerVersion, maxInflated int) (*RegisterBrokerBody, error) {
	if maxInflated <= 0 {
		maxInflated = DefaultMaxInflated
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return &RegisterBrokerBody{Topics: map[string]TopicConfig{}}, nil
	case trimmed[0] == '{':
		return decodeRegisterJSON(body, brokerVersion)
	case isZlibHeader(body):
		return decodeRegisterCompressed(body, brokerVersion, maxInflated)
	}
	return nil, malformed("register body is neither JSON nor zlib (first byte 0x%02x)", body[0])
}

// isZlibHeader checks RFC 1950's two header bytes: deflate method, and
// CMF*256+FLG a multiple of 31. Java's Deflater starts 0x78; no JSON text
// can pass this test.
func isZlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0f == 8 && b[0]>>4 <= 7 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}

func decodeRegisterJSON(body []byte, brokerVersion int) (*RegisterBrokerBody, error) {
	var w registerBodyJSON
	var err error
	if brokerVersion < VersionRegisterBody {
		err = Unmarshal(body, &w.Wrapper) // pre-3.0.11: the wrapper alone
	} else {
		err = Unmarshal(body, &w)
	}
	if err != nil {
		return nil, malformed("register body: %v", err)
	}
	rb := &RegisterBrokerBody{
		DataVersion:   w.Wrapper.DataVersion,
		Topics:        w.Wrapper.TopicConfigTable,
		FilterServers: w.FilterServerList,
	}
	if w.Wrapper.MappingInfos != nil {
		rb.QueueMappings = *w.Wrapper.MappingInfos
	}
	if rb.Topics == nil {
		rb.Topics = map[string]TopicConfig{}
	}
	for name, tc := range rb.Topics {
		if tc.TopicName == "" {
			tc.TopicName = name
			rb.Topics[name] = tc
		}
	}
	if w.Wrapper.MappingDataVersion != nil {
		rb.MappingDataVersion = *w.Wrapper.MappingDataVersion
	}
	return rb, nil
}

// EncodeRegisterBrokerBody encodes b as a broker of brokerVersion would:
// JSON, or the compressed layout when compress is set. Tests and fake
// brokers use it; a NameServer only decodes.
func EncodeRegisterBrokerBody(b *RegisterBrokerBody, compress bool, brokerVersion int) ([]byte, error) {
	if compress {
		return encodeRegisterCompressed(b, brokerVersion)
	}
	w := registerBodyJSON{
		FilterServerList: b.FilterServers,
		Wrapper:          topicConfigWrapper{DataVersion: b.DataVersion, TopicConfigTable: b.Topics},
	}
	if w.FilterServerList == nil {
		w.FilterServerList = []string{}
	}
	if w.Wrapper.TopicConfigTable == nil {
		w.Wrapper.TopicConfigTable = map[string]TopicConfig{}
	}
	if brokerVersion >= VersionStaticTopics {
		mdv := b.MappingDataVersion
		w.Wrapper.MappingDataVersion = &mdv
		details, infos := map[string]json.RawMessage{}, b.QueueMappings
		if infos == nil {
			infos = map[string]TopicQueueMappingInfo{}
		}
		w.Wrapper.MappingDetails, w.Wrapper.MappingInfos = &details, &infos
	}
	if brokerVersion < VersionRegisterBody {
		return json.Marshal(w.Wrapper)
	}
	return json.Marshal(w)
}

// ErrBodyCRC32 is returned by CheckBodyCRC32 for a body that does not match
// its checksum; Java answers it with SYSTEM_ERROR "crc32 not match".
var ErrBodyCRC32 = errors.New("crc32 not match")

// BodyCRC32 is Java's UtilAll.crc32: CRC-32/IEEE with the sign bit cleared.
func BodyCRC32(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7fffffff)
}

// CheckBodyCRC32 checks body against the bodyCrc32 ext field. An absent or
// zero field means the broker sent no checksum.
func CheckBodyCRC32(body []byte, bodyCrc32 string) error {
	if bodyCrc32 == "" {
		return nil
	}
	want, err := strconv.ParseInt(bodyCrc32, 10, 32)
	if err != nil {
		return malformed("bodyCrc32 %q is not an int32", bodyCrc32)
	}
	if want == 0 {
		return nil
	}
	if got := BodyCRC32(body); int64(got) != want {
		return fmt.Errorf("%w: body has %d, header says %d", ErrBodyCRC32, got, want)
	}
	return nil
}
