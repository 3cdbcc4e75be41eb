package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestDecodeRegisterJSON(t *testing.T) {
	t.Run("5.x", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody([]byte(registerBody5x), 479, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := &RegisterBrokerBody{
			DataVersion:        DataVersion{Counter: 12, Timestamp: 1700000000000},
			MappingDataVersion: DataVersion{Timestamp: 1700000000000},
			Topics: map[string]TopicConfig{"TopicTest": {TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6,
				TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}}},
			FilterServers: []string{},
			QueueMappings: map[string]TopicQueueMappingInfo{},
		}
		if !reflect.DeepEqual(rb, want) {
			t.Errorf("got  %+v\nwant %+v", rb, want)
		}
	})
	t.Run("4.9", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody([]byte(registerBody49), 409, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rb.DataVersion != (DataVersion{Counter: 7, Timestamp: 1690000000000}) || len(rb.Topics) != 6 {
			t.Fatalf("got %+v", rb)
		}
		if tc := rb.Topics["TopicTest"]; !tc.Order || tc.TopicSysFlag != 1 || tc.Perm != 6 || tc.ReadQueueNums != 4 {
			t.Errorf("TopicTest = %+v", tc)
		}
		if tc := rb.Topics["%RETRY%please_rename_unique_group_name"]; tc.TopicName != "%RETRY%please_rename_unique_group_name" || tc.WriteQueueNums != 1 {
			t.Errorf("retry topic = %+v", tc)
		}
	})
	t.Run("5.x static topic", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody([]byte(registerBody5xStatic), 479, 0)
		if err != nil {
			t.Fatal(err)
		}
		m := rb.QueueMappings["StaticTopic"]
		if m.Bname != "broker-a" || m.TotalQueues != 2 || m.CurrIDMap[1] != 1 || m.Scope != "__global__" || rb.MappingDataVersion.Counter != 1 {
			t.Errorf("mapping = %+v, mapping version %+v", m, rb.MappingDataVersion)
		}
		if rb.Topics["StaticTopic"].Attributes["+message.type"] != "NORMAL" || rb.DataVersion.StateVersion != 2 {
			t.Errorf("topics = %+v", rb.Topics)
		}
	})
	t.Run("pre-3.0.11 wrapper", func(t *testing.T) {
		body := `{"dataVersion":{"counter":1,"timestamp":5},"topicConfigTable":{"T":{"perm":6,"readQueueNums":2,"writeQueueNums":2}}}`
		rb, err := DecodeRegisterBrokerBody([]byte(body), 36, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rb.DataVersion.Counter != 1 || rb.Topics["T"].TopicName != "T" || rb.Topics["T"].Perm != 6 {
			t.Errorf("got %+v", rb)
		}
	})
	t.Run("empty", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody(nil, 479, 0)
		if err != nil || rb.Topics == nil || len(rb.Topics) != 0 || rb.DataVersion != (DataVersion{}) {
			t.Errorf("empty body: %+v, %v", rb, err)
		}
	})
}

func TestDecodeRegisterCompressed(t *testing.T) {
	t.Run("4.9", func(t *testing.T) {
		body := compressedRegister49(t)
		if body[0] != 0x78 {
			t.Fatalf("zlib stream starts 0x%02x", body[0])
		}
		rb, err := DecodeRegisterBrokerBody(body, 409, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]TopicConfig{
			"TopicTest": {TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG"},
			"TBW102":    {TopicName: "TBW102", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7, TopicFilterType: "SINGLE_TAG"},
			"%RETRY%please_rename_unique_group_name": {TopicName: "%RETRY%please_rename_unique_group_name",
				ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, TopicFilterType: "SINGLE_TAG"},
		}
		if !reflect.DeepEqual(rb.Topics, want) || rb.DataVersion != (DataVersion{Counter: 7, Timestamp: 1690000000000}) {
			t.Errorf("got %+v", rb)
		}
	})
	t.Run("5.x", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody(compressedRegister5x(t), 479, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]TopicConfig{
			"TopicTest": {TopicName: "TopicTest", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}},
			"FifoTopic": {TopicName: "FifoTopic", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG",
				Attributes: map[string]string{"+message.type": "FIFO"}},
			"NoAttrs": {TopicName: "NoAttrs", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 4, TopicFilterType: "MULTI_TAG"},
		}
		if !reflect.DeepEqual(rb.Topics, want) {
			t.Errorf("topics\n got %+v\nwant %+v", rb.Topics, want)
		}
		if !reflect.DeepEqual(rb.FilterServers, []string{"10.0.0.1:40001"}) || rb.QueueMappings["StaticTopic"].CurrIDMap[1] != 1 {
			t.Errorf("got %+v", rb)
		}
	})
	t.Run("5.x layout from a broker announcing an old version", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody(compressedRegister5x(t), 409, 0)
		if err != nil || len(rb.Topics) != 3 || rb.QueueMappings != nil {
			t.Errorf("got %+v, %v", rb, err)
		}
	})
	t.Run("4.x layout from a 5.x version", func(t *testing.T) {
		rb, err := DecodeRegisterBrokerBody(compressedRegister49(t), 479, 0)
		if err != nil || len(rb.Topics) != 3 {
			t.Errorf("got %+v, %v", rb, err)
		}
	})
}

func TestDecodeRegisterErrors(t *testing.T) {
	const dv = `{"counter":1,"timestamp":2}`
	// raw is the inflated stream up to and including the topic count.
	raw := func(topics uint32) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(dv)))
		b = append(b, dv...)
		return binary.BigEndian.AppendUint32(b, topics)
	}
	partPastEnd := binary.BigEndian.AppendUint32(raw(2), 100) // promises 100 bytes
	partPastEnd = append(partPastEnd, "T 1 1 6 SINGLE_TAG"...)
	mappingCountLie := binary.BigEndian.AppendUint32(raw(0), 2)
	mappingCountLie = binary.BigEndian.AppendUint32(append(mappingCountLie, "[]"...), 1000)
	corrupt := compressedRegister49(t)
	corrupt[len(corrupt)-1] ^= 0xff // adler-32 trailer

	cases := map[string][]byte{
		"not JSON or zlib":  []byte("hello"),
		"bad JSON":          []byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":[]}}`),
		"truncated JSON":    []byte(registerBody5x[:100]),
		"truncated zlib":    compressedRegister49(t)[:20],
		"corrupt checksum":  corrupt,
		"part past end":     deflate(t, partPastEnd),
		"huge topic count":  deflate(t, raw(1<<30)),
		"no filter list":    deflate(t, raw(0)),
		"short topic line":  compressedRegister(t, dv, []string{"T 1 1 6"}, `[]`, nil),
		"bad queue number":  compressedRegister(t, dv, []string{"T x 1 6 SINGLE_TAG"}, `[]`, nil),
		"empty topic name":  compressedRegister(t, dv, []string{" 1 1 6 SINGLE_TAG"}, `[]`, nil),
		"bad data version":  compressedRegister(t, `[]`, nil, `[]`, nil),
		"bad mapping":       compressedRegister(t, dv, nil, `[]`, []string{`{"topic":1}`}),
		"mapping count lie": deflate(t, mappingCountLie),
	}
	for name, body := range cases {
		if _, err := DecodeRegisterBrokerBody(body, 479, 0); !malformedErr(err) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestDecodeRegisterInflateCap(t *testing.T) {
	bomb := deflate(t, make([]byte, 10<<20))
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb is %d bytes", len(bomb))
	}
	allocated := bytesAllocated(func() {
		_, err := DecodeRegisterBrokerBody(bomb, 479, 1<<20)
		if err == nil || !strings.Contains(err.Error(), "inflates past the 1048576-byte cap") {
			t.Errorf("err = %v", err)
		}
	})
	if allocated > 8<<20 {
		t.Errorf("a 10 MiB bomb under a 1 MiB cap allocated %d bytes", allocated)
	}
}

func TestEncodeRegisterRoundTrip(t *testing.T) {
	rb := &RegisterBrokerBody{
		DataVersion: DataVersion{Counter: 5, StateVersion: 1, Timestamp: 99},
		Topics: map[string]TopicConfig{
			"A": {TopicName: "A", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{"k": "v"}},
			"B": {TopicName: "B", ReadQueueNums: 1, WriteQueueNums: 2, Perm: 2, TopicFilterType: "MULTI_TAG", Attributes: map[string]string{}},
		},
		FilterServers:      []string{"f:1"},
		MappingDataVersion: DataVersion{Counter: 1},
		QueueMappings: map[string]TopicQueueMappingInfo{"A": {Topic: "A", Scope: "__global__", TotalQueues: 2, Bname: "b",
			CurrIDMap: map[int32]int32{0: 0, 1: 1}}},
	}
	for _, compress := range []bool{false, true} {
		body, err := EncodeRegisterBrokerBody(rb, compress, VersionCurrent)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRegisterBrokerBody(body, VersionCurrent, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := *rb
		if compress {
			want.MappingDataVersion = DataVersion{} // not in Java's compressed layout
		}
		if !reflect.DeepEqual(got, &want) {
			t.Errorf("compress=%v\n got %+v\nwant %+v", compress, got, &want)
		}
	}
	// A 4.x broker's shape drops what 4.x does not carry.
	body, err := EncodeRegisterBrokerBody(rb, true, 409)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRegisterBrokerBody(body, 409, 0)
	if err != nil || got.Topics["A"].Attributes != nil || got.QueueMappings != nil || got.Topics["A"].Perm != 6 {
		t.Errorf("4.x shape: %+v, %v", got, err)
	}
}

func TestBodyCRC32(t *testing.T) {
	// CRC-32/IEEE("123456789") is 0xCBF43926; Java clears the sign bit.
	if got := BodyCRC32([]byte("123456789")); got != 0x4BF43926 {
		t.Errorf("BodyCRC32 = %#x", got)
	}
	body := []byte(registerBody5x)
	good := BodyCRC32(body)
	for _, tc := range []struct {
		header string
		ok     bool
	}{
		{"", true}, {"0", true}, {itoa(good), true}, {itoa(good ^ 1), false}, {"x", false}, {"4294967295", false},
	} {
		err := CheckBodyCRC32(body, tc.header)
		if (err == nil) != tc.ok {
			t.Errorf("CheckBodyCRC32(%q) = %v", tc.header, err)
		}
		if tc.header == itoa(good^1) && !errors.Is(err, ErrBodyCRC32) {
			t.Errorf("mismatch error %v is not ErrBodyCRC32", err)
		}
	}
	if err := CheckBodyCRC32(nil, itoa(BodyCRC32(nil))); err != nil {
		t.Errorf("empty body: %v", err)
	}
	if !bytes.Equal(body, []byte(registerBody5x)) {
		t.Error("CheckBodyCRC32 changed the body")
	}
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
