package nacos

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/golang/protobuf/proto"
	pb "github.com/nacos-group/nacos-sdk-go/v2/api/grpc"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// Every golden frame of nacoswire decodes with the client's generated
// protobuf code to the same payload, and the client's deterministic
// encoding of it is byte for byte the golden.
func TestGoldenFramesAreNacosProtobuf(t *testing.T) {
	files, _ := filepath.Glob("../../agent/nacos/nacoswire/testdata/golden/*.bin")
	if len(files) < 20 {
		t.Fatalf("found %d golden frames", len(files))
	}
	for _, f := range files {
		frame, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := nacoswire.ReadMessage(bytes.NewReader(frame), nacoswire.MaxMessage)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var p pb.Payload
		if err := proto.Unmarshal(msg, &p); err != nil {
			t.Fatalf("%s: the client's protobuf refuses it: %v", f, err)
		}
		ours, _ := nacoswire.Unmarshal(msg)
		if p.GetMetadata().GetType() != ours.Type || p.GetMetadata().GetClientIp() != ours.ClientIP ||
			!bytes.Equal(p.GetBody().GetValue(), ours.Body) || len(p.GetMetadata().GetHeaders()) != len(ours.Headers) {
			t.Fatalf("%s: the client reads %v", f, &p)
		}
		for k, v := range ours.Headers {
			if p.GetMetadata().GetHeaders()[k] != v {
				t.Fatalf("%s: header %s", f, k)
			}
		}
		var buf proto.Buffer
		buf.SetDeterministic(true)
		if err := buf.Marshal(&p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), msg) {
			t.Fatalf("%s: the client encodes\n%x\nthe golden holds\n%x", f, buf.Bytes(), msg)
		}
	}
}
