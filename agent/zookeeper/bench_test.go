package zookeeper

import (
	"fmt"
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// BenchmarkGetChildren2Pipelined lists a category of 1,000 provider URLs,
// 64 requests in flight, as a busy Curator client would: per-op cost of
// the door on loopback.
func BenchmarkGetChildren2Pipelined(b *testing.B) {
	s, _ := startServer(b)
	r := dialRaw(b, s)
	r.handshake(false)
	for i, p := range []string{"/dubbo", "/dubbo/demo.Api", "/dubbo/demo.Api/providers"} {
		create(b, r, int32(i+1), p, 0)
	}
	for i := 0; i < 1000; i++ {
		u := fmt.Sprintf("dubbo://10.0.%d.%d:20880/demo.Api?application=demo&interface=demo.Api&side=provider", i/250, i%250)
		create(b, r, int32(10+i), "/dubbo/demo.Api/providers/"+javaEncode(u), zkwire.FlagEphemeral)
	}
	const window = 64
	frame := zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: 1, Type: zkwire.OpGetChildren2}).Encode(e)
		(&zkwire.PathWatch{Path: "/dubbo/demo.Api/providers"}).Encode(e)
	})
	done := make(chan error, 1)
	inFlight := make(chan struct{}, window)
	b.ResetTimer()
	go func() {
		for i := 0; i < b.N; i++ {
			body, err := zkwire.ReadPacket(r.br, zkwire.MaxPacket)
			<-inFlight
			if err != nil || len(body) < 1000*20 {
				done <- fmt.Errorf("reply %d: %d bytes, %v", i, len(body), err)
				return
			}
		}
		done <- nil
	}()
	for i := 0; i < b.N; i++ {
		inFlight <- struct{}{}
		if _, err := r.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
