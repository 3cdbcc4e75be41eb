package remoting

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"reflect"
	"strings"
	"testing"
)

func goRouteCommand(typ SerializeType) *Command {
	return &Command{
		Code: GetRouteInfoByTopic, Language: LanguageGo, Version: VersionGoClient, Opaque: 1,
		ExtFields: map[string]string{"topic": "TopicTest"}, SerializeType: typ,
	}
}

func TestDecodeSpecFrames(t *testing.T) {
	for name, frame := range map[string][]byte{
		"json":   goRouteRequestJSON(),
		"binary": goRouteRequestBinary(),
	} {
		t.Run(name, func(t *testing.T) {
			if len(frame) != map[string]int{"json": 116, "binary": 49}[name] {
				t.Fatalf("fixture is %d bytes; the spec's frame differs", len(frame))
			}
			got, err := ReadFrame(bytes.NewReader(frame), DefaultMaxFrame)
			if err != nil {
				t.Fatal(err)
			}
			want := goRouteCommand(SerializeJSON)
			if name == "binary" {
				want.SerializeType = SerializeRocketMQ
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded\n %v\nwant\n %v", got, want)
			}
			if got.IsResponse() || got.IsOneway() {
				t.Error("a plain request reads as response or oneway")
			}
		})
	}
}

// The binary form has one encoding, so ours must match the spec's bytes.
func TestEncodeBinaryMatchesSpec(t *testing.T) {
	got, err := AppendFrame(nil, goRouteCommand(SerializeRocketMQ))
	if err != nil {
		t.Fatal(err)
	}
	if want := goRouteRequestBinary(); !bytes.Equal(got, want) {
		t.Errorf("got\n% x\nwant\n% x", got, want)
	}
	golden(t, "go-route-request-binary.hex", got)
}

// Our JSON request header follows Java's key order, not Go's.
func TestEncodeJSONRequest(t *testing.T) {
	got, err := AppendFrame(nil, goRouteCommand(SerializeJSON))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"GO","opaque":1,"serializeTypeCurrentRPC":"JSON","version":317}`
	if string(got[8:]) != want {
		t.Errorf("header\n got %s\nwant %s", got[8:], want)
	}
	golden(t, "go-route-request-json.hex", got)
}

// A success response must be the header a Java NameServer sends (§1.3).
func TestEncodeJSONResponseLikeJava(t *testing.T) {
	req := &Command{Code: GetRouteInfoByTopic, Opaque: 7, SerializeType: SerializeRocketMQ}
	resp := NewResponse(req, Success, "")
	if !resp.IsResponse() || resp.Opaque != 7 || resp.SerializeType != SerializeJSON {
		t.Fatalf("NewResponse = %v", resp)
	}
	resp.Body = []byte(`{"brokerDatas":[],"filterServerTable":{},"queueDatas":[]}`)
	got, err := AppendFrame(nil, resp)
	if err != nil {
		t.Fatal(err)
	}
	const header = `{"code":0,"flag":1,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}`
	if h := got[8 : 8+len(header)]; string(h) != header {
		t.Errorf("header\n got %s\nwant %s", h, header)
	}
	if n, hl := binary.BigEndian.Uint32(got), binary.BigEndian.Uint32(got[4:]); int(n) != len(got)-4 || int(hl) != len(header) {
		t.Errorf("length %d, header length %d for %d bytes", n, hl, len(got))
	}
	golden(t, "route-response-json.hex", got)
}

func TestEncodeErrorResponses(t *testing.T) {
	req := &Command{Code: 999, Opaque: 42}
	notSupported := NewResponse(req, RequestCodeNotSupported, " request type 999 not supported")
	notFound := NewResponse(req, TopicNotExist, "No topic route info in name server for the topic: T\"x\"\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
	wipe := NewResponse(req, Success, "")
	wipe.SetExt("wipeTopicCount", "3")
	for name, c := range map[string]*Command{"not-supported": notSupported, "topic-not-exist": notFound, "wipe": wipe} {
		for _, typ := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
			c.SerializeType = typ
			b, err := AppendFrame(nil, c)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "response-"+name+"-"+strings.ToLower(typ.String())+".hex", b)
			back, err := ReadFrame(bytes.NewReader(b), DefaultMaxFrame)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCommand(back, c) {
				t.Errorf("%s/%s: round trip gave %v, want %v", name, typ, back, c)
			}
		}
	}
}

// sameCommand compares commands, treating empty and nil ext maps and
// bodies alike (the wire does not tell them apart).
func sameCommand(a, b *Command) bool {
	x, y := *a, *b
	for _, c := range []*Command{&x, &y} {
		if len(c.ExtFields) == 0 {
			c.ExtFields = nil
		}
		if len(c.Body) == 0 {
			c.Body = nil
		}
	}
	return reflect.DeepEqual(x, y)
}

func TestRoundTrip(t *testing.T) {
	cmds := []*Command{
		{},
		goRouteCommand(SerializeJSON),
		{Code: RegisterBroker, Language: LanguageJava, Version: 479, Opaque: -5, Flag: FlagOneway,
			ExtFields: map[string]string{"brokerName": "broker-a", "brokerId": "0", "": "", "quote\"d": "line\nbreak\t\x01", "ü": "日本"},
			Body:      []byte(registerBody5x)},
		{Code: TopicNotExist, Language: LanguageCode(200), Version: -1, Opaque: 1 << 30, Flag: FlagResponse | 4,
			Remark: "remark with \u2028 and \\ and \x7f"},
		{Code: Success, Flag: FlagResponse, Body: []byte{0, 1, 2, 0xff}},
	}
	for i, c := range cmds {
		for _, typ := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
			c.SerializeType = typ
			b, err := AppendFrame([]byte("prefix"), c)
			if err != nil {
				t.Fatalf("%d/%s: %v", i, typ, err)
			}
			got, err := ReadFrame(bytes.NewReader(b[len("prefix"):]), DefaultMaxFrame)
			if err != nil {
				t.Fatalf("%d/%s: %v", i, typ, err)
			}
			if !sameCommand(got, c) {
				t.Errorf("%d/%s: round trip\n got %v\nwant %v", i, typ, got, c)
			}
		}
	}
}

func TestWriteTo(t *testing.T) {
	var buf bytes.Buffer
	c := goRouteCommand(SerializeRocketMQ)
	n, err := c.WriteTo(&buf)
	if err != nil || n != int64(len(goRouteRequestBinary())) || !bytes.Equal(buf.Bytes(), goRouteRequestBinary()) {
		t.Errorf("WriteTo = %d, %v; wrote % x", n, err, buf.Bytes())
	}
}

func TestDecoderStream(t *testing.T) {
	var stream []byte
	stream = append(stream, goRouteRequestJSON()...)
	stream = append(stream, jsonFrame(`{"code":103,"opaque":2}`, []byte("body-one"))...)
	stream = append(stream, goRouteRequestBinary()...)
	stream = append(stream, jsonFrame(`{"code":104,"opaque":4,"remark":"r"}`, []byte("body-two"))...)
	d := NewDecoder(bufio.NewReader(bytes.NewReader(stream)), 0)
	var got []*Command
	for {
		c, err := d.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if len(got) != 4 {
		t.Fatalf("decoded %d frames, want 4", len(got))
	}
	// Later frames must not have overwritten earlier ones' strings or bodies.
	if got[0].ExtFields["topic"] != "TopicTest" || string(got[1].Body) != "body-one" ||
		got[2].Opaque != 1 || string(got[3].Body) != "body-two" || got[3].Remark != "r" {
		t.Errorf("frames corrupted each other: %v", got)
	}
}

// A large body arriving in full decodes intact through the growth path.
func TestDecodeLargeBody(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 640 KB
	c := &Command{Code: RegisterBroker, Body: body}
	b, err := AppendFrame(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFrame(iotestHalfReader{bytes.NewReader(b)}, DefaultMaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Body, body) {
		t.Error("large body corrupted")
	}
}

// iotestHalfReader returns at most 1000 bytes per Read, like a socket.
type iotestHalfReader struct{ r io.Reader }

func (h iotestHalfReader) Read(p []byte) (int, error) { return h.r.Read(p[:min(len(p), 1000)]) }

func TestDecoderAllocations(t *testing.T) {
	frame := goRouteRequestJSON()
	r := bytes.NewReader(frame)
	d := NewDecoder(r, 0)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(frame)
		if _, err := d.Decode(); err != nil {
			t.Fatal(err)
		}
	})
	// Command, ext map, two strings; the header buffer is reused.
	if allocs > 5 {
		t.Errorf("decoding a route request costs %.0f allocations", allocs)
	}
}

func TestRequestName(t *testing.T) {
	if got := RequestName(GetRouteInfoByTopic); got != "GET_ROUTEINFO_BY_TOPIC" {
		t.Errorf("RequestName(105) = %q", got)
	}
	if got := RequestName(4242); got != "CODE_4242" {
		t.Errorf("RequestName(4242) = %q", got)
	}
	if LanguageNodeJS.String() != "NODE_JS" || LanguageCode(99).String() != "99" {
		t.Error("language names")
	}
}
