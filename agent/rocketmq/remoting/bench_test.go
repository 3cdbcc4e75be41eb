package remoting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// jsonHeaderOut is the header as encoding/json would write it, fields in
// Java's order: the yardstick for appendJSONHeader.
type jsonHeaderOut struct {
	Code                    int               `json:"code"`
	ExtFields               map[string]string `json:"extFields,omitempty"`
	Flag                    int32             `json:"flag"`
	Language                string            `json:"language"`
	Opaque                  int32             `json:"opaque"`
	Remark                  string            `json:"remark,omitempty"`
	SerializeTypeCurrentRPC string            `json:"serializeTypeCurrentRPC"`
	Version                 int               `json:"version"`
}

func toJSONHeaderOut(c *Command) jsonHeaderOut {
	return jsonHeaderOut{c.Code, c.ExtFields, c.Flag, c.Language.String(), c.Opaque, c.Remark, "JSON", c.Version}
}

func benchResponses() map[string]*Command {
	route := NewResponse(&Command{Opaque: 7}, Success, "")
	wipe := NewResponse(&Command{Opaque: 8}, Success, "")
	wipe.SetExt("wipeTopicCount", "12")
	reg := NewResponse(&Command{Opaque: 9}, Success, "")
	reg.SetExt("masterAddr", "10.0.0.1:10911")
	reg.SetExt("haServerAddr", "10.0.0.1:10912")
	notFound := NewResponse(&Command{Opaque: 10}, TopicNotExist,
		"No topic route info in name server for the topic: TopicTest\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.")
	return map[string]*Command{"route": route, "wipe": wipe, "register": reg, "not-found": notFound}
}

// The hand-written encoder must say exactly what encoding/json says.
func TestHeaderEncoderMatchesEncodingJSON(t *testing.T) {
	for name, c := range benchResponses() {
		want, err := json.Marshal(toJSONHeaderOut(c))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONHeader(nil, c); !bytes.Equal(got, want) {
			t.Errorf("%s\n got %s\nwant %s", name, got, want)
		}
	}
}

func BenchmarkEncodeHeader(b *testing.B) {
	for name, c := range benchResponses() {
		b.Run(name+"/handwritten", func(b *testing.B) {
			buf := make([]byte, 0, 512)
			b.ReportAllocs()
			for b.Loop() {
				buf = appendJSONHeader(buf[:0], c)
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(toJSONHeaderOut(c)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeHeader(b *testing.B) {
	for name, h := range map[string][]byte{"go-request": []byte(goRouteRequestHeader), "java-register": []byte(javaRegisterHeader)} {
		b.Run(name+"/scanner", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var c Command
				if !decodeJSONHeaderFast(h, &c) {
					b.Fatal("fast path refused")
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var c Command
				if err := decodeJSONHeaderSlow(h, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	for name, frame := range map[string][]byte{"json": goRouteRequestJSON(), "binary": goRouteRequestBinary()} {
		b.Run(name, func(b *testing.B) {
			r := bytes.NewReader(frame)
			d := NewDecoder(r, 0)
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				r.Reset(frame)
				if _, err := d.Decode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A whole route answer: body and frame, into a reused buffer.
func BenchmarkRouteResponse(b *testing.B) {
	route := richRoute()
	req := &Command{Opaque: 3, Version: VersionGoClient}
	var body, frame []byte
	b.ReportAllocs()
	for b.Loop() {
		body = route.AppendJSON(body[:0], RouteFormFor(req))
		resp := NewResponse(req, Success, "")
		resp.Body = body
		var err error
		if frame, err = AppendFrame(frame[:0], resp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRouteBody(b *testing.B) {
	route := richRoute()
	for _, form := range []struct {
		name string
		f    JSONForm
	}{{"standard", StandardJSON}, {"legacy", LegacyJSON}} {
		b.Run(form.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				buf = route.AppendJSON(buf[:0], form.f)
			}
		})
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(route); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkQuoteNumericKeys(b *testing.B) {
	for name, in := range map[string][]byte{
		"valid-json":     []byte(registerBody49),
		"fastjson-route": richRoute().AppendJSON(nil, LegacyJSON),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				QuoteNumericKeys(in)
			}
		})
	}
}

func BenchmarkDecodeRegisterBody(b *testing.B) {
	rb := &RegisterBrokerBody{Topics: map[string]TopicConfig{}}
	for i := range 1000 {
		name := fmt.Sprintf("Topic-%04d", i)
		rb.Topics[name] = TopicConfig{TopicName: name, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6,
			TopicFilterType: "SINGLE_TAG", Attributes: map[string]string{}}
	}
	for _, compress := range []bool{false, true} {
		body, err := EncodeRegisterBrokerBody(rb, compress, VersionCurrent)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("1000-topics/compressed=%v", compress), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := DecodeRegisterBrokerBody(body, VersionCurrent, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
