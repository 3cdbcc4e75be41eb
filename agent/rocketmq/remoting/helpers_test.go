package remoting

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and fuzz seed corpora under testdata/")

// golden compares got with testdata/golden/name, or rewrites the file under
// -update. Names ending in .hex hold a hex dump, so that reviews of frame
// changes show bytes.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	if filepath.Ext(name) == ".hex" {
		got = []byte(hex.Dump(got))
	}
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (run with -update if the change is intended)\n got: %s\nwant: %s", name, got, want)
	}
}

// The two request frames of §1.6, byte for byte: Go client v2.1.2 asking
// for TopicTest's route with a JSON header, and the same request with a
// ROCKETMQ binary header.
const goRouteRequestHeader = `{"code":105,"language":"GO","version":317,"opaque":1,"flag":0,"remark":"","extFields":{"topic":"TopicTest"}}`

func goRouteRequestJSON() []byte {
	b := []byte{0x00, 0x00, 0x00, 0x70, 0x00, 0x00, 0x00, 0x6c}
	return append(b, goRouteRequestHeader...)
}

func goRouteRequestBinary() []byte {
	b := []byte{
		0x00, 0x00, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29,
		0x00, 0x69, // code 105
		0x09,       // GO
		0x01, 0x3d, // version 317
		0x00, 0x00, 0x00, 0x01, // opaque
		0x00, 0x00, 0x00, 0x00, // flag
		0x00, 0x00, 0x00, 0x00, // no remark
		0x00, 0x00, 0x00, 0x14, // 20 bytes of ext fields
		0x00, 0x05,
	}
	b = append(b, "topic"...)
	b = append(b, 0x00, 0x00, 0x00, 0x09)
	return append(b, "TopicTest"...)
}

// jsonFrame wraps a JSON header and body into a frame by hand, so tests of
// the decoder do not depend on the encoder.
func jsonFrame(header string, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	return append(b, body...)
}

// javaRegisterHeader is a 5.x broker's REGISTER_BROKER header.
const javaRegisterHeader = `{"code":103,"extFields":{"brokerAddr":"10.0.0.1:10911","brokerId":"0","brokerName":"broker-a","bodyCrc32":"1712345678","clusterName":"DefaultCluster","compressed":"false","enableActingMaster":"false","haServerAddr":"10.0.0.1:10912"},"flag":0,"language":"JAVA","opaque":3,"serializeTypeCurrentRPC":"JSON","version":479}`

// Register bodies exactly as brokers write them (§3.5).
const (
	registerBody5x = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}`

	registerBody49 = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":7,"timestamp":1690000000000},"topicConfigTable":{` +
		`"SCHEDULE_TOPIC_XXXX":{"order":false,"perm":6,"readQueueNums":18,"topicFilterType":"SINGLE_TAG","topicName":"SCHEDULE_TOPIC_XXXX","topicSysFlag":0,"writeQueueNums":18},` +
		`"DefaultCluster":{"order":false,"perm":7,"readQueueNums":16,"topicFilterType":"SINGLE_TAG","topicName":"DefaultCluster","topicSysFlag":0,"writeQueueNums":16},` +
		`"TopicTest":{"order":true,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":1,"writeQueueNums":4},` +
		`"%RETRY%please_rename_unique_group_name":{"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"%RETRY%please_rename_unique_group_name","topicSysFlag":0,"writeQueueNums":1},` +
		`"TBW102":{"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8},` +
		`"broker-a":{"order":false,"perm":7,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":"broker-a","topicSysFlag":0,"writeQueueNums":1}}}}`

	// A 5.x body with a static topic: fastjson writes currIdMap and
	// hostedQueues with bare integer keys.
	registerBody5xStatic = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":2,"timestamp":1700000000000},"mappingDataVersion":{"counter":1,"stateVersion":0,"timestamp":1700000000001},"topicConfigTable":{"StaticTopic":{"attributes":{"+message.type":"NORMAL"},"order":false,"perm":6,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"StaticTopic","topicSysFlag":0,"writeQueueNums":2}},"topicQueueMappingDetailMap":{"StaticTopic":{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1700000000000,"hostedQueues":{0:[{"bname":"broker-a","gen":0,"logicOffset":0,"queueId":0,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}],1:[{"bname":"broker-a","gen":0,"logicOffset":0,"queueId":1,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}]},"scope":"__global__","topic":"StaticTopic","totalQueues":2}},"topicQueueMappingInfoMap":{"StaticTopic":{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"StaticTopic","totalQueues":2}}}}`
)

// compressedRegister builds a compressed registration the way Java's
// RegisterBrokerBody.encode(true) does, from already-encoded parts: the
// builder is independent of the package's own encoder. mappings == nil
// leaves the 5.x section out entirely (4.x brokers).
func compressedRegister(t testing.TB, dataVersion string, lines []string, filterServers string, mappings []string) []byte {
	t.Helper()
	var raw []byte
	part := func(s string) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(s)))
		raw = append(raw, s...)
	}
	part(dataVersion)
	raw = binary.BigEndian.AppendUint32(raw, uint32(len(lines)))
	for _, l := range lines {
		part(l)
	}
	part(filterServers)
	if mappings != nil {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(mappings)))
		for _, m := range mappings {
			part(m)
		}
	}
	return deflate(t, raw)
}

func deflate(t testing.TB, raw []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression) // Java: Deflater.BEST_COMPRESSION
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A 4.9.8 broker: five-token lines, no mapping section.
func compressedRegister49(t testing.TB) []byte {
	return compressedRegister(t, `{"counter":7,"timestamp":1690000000000}`, []string{
		"TopicTest 4 4 6 SINGLE_TAG",
		"TBW102 8 8 7 SINGLE_TAG",
		"%RETRY%please_rename_unique_group_name 1 1 6 SINGLE_TAG",
	}, `[]`, nil)
}

// A 5.x broker: a trailing separator and attributes JSON on every line,
// and the static-topic section (here with one fastjson mapping).
func compressedRegister5x(t testing.TB) []byte {
	return compressedRegister(t, `{"counter":12,"stateVersion":0,"timestamp":1700000000000}`, []string{
		"TopicTest 4 4 6 SINGLE_TAG {}",
		"FifoTopic 8 8 6 SINGLE_TAG {\"+message.type\":\"FIFO\"}",
		"NoAttrs 2 2 4 MULTI_TAG ",
	}, `["10.0.0.1:40001"]`, []string{
		`{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1700000000000,"scope":"__global__","topic":"StaticTopic","totalQueues":2}`,
	})
}
