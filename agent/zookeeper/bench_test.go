package zookeeper

import (
	"bufio"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// The read path's benchmarks: a category of 1,000 provider URLs of
// Dubbo's usual length, read with 32 requests in flight on one connection
// as a busy client would (test/zookeeper's TestFigures drives the same
// shapes through go-zookeeper). Per-op cost of the door on loopback:
//
//	go test -run '^$' -bench Pipelined -benchmem -cpuprofile cpu.out .
const benchProviders = "/dubbo/org.apache.dubbo.demo.DemoService/providers"

func benchProvider(i int) string {
	return benchProviders + "/" + javaEncode(fmt.Sprintf("dubbo://10.0.%d.%d:20880/org.apache.dubbo.demo.DemoService?"+
		"anyhost=true&application=demo-provider&deprecated=false&dubbo=2.0.2&dynamic=true&generic=false"+
		"&interface=org.apache.dubbo.demo.DemoService&methods=sayHello,sayHelloAsync&pid=%d&release=3.3.1"+
		"&side=provider&timestamp=1735689600000", i/250, i%250, 1000+i))
}

func BenchmarkGetChildren2Pipelined(b *testing.B) {
	benchRead(b, zkwire.OpGetChildren2, benchProviders, 1000*300)
}

func BenchmarkExistsPipelined(b *testing.B) { benchRead(b, zkwire.OpExists, benchProvider(7), 80) }

func BenchmarkGetDataPipelined(b *testing.B) { benchRead(b, zkwire.OpGetData, benchProvider(7), 80) }

func benchRead(b *testing.B, op int32, path string, minReply int) {
	s, _ := startServer(b)
	r := dialRaw(b, s)
	r.handshake(false)
	for i, p := range []string{"/dubbo", "/dubbo/org.apache.dubbo.demo.DemoService", benchProviders} {
		create(b, r, int32(i+1), p, 0)
	}
	for i := 0; i < 1000; i++ {
		create(b, r, int32(10+i), benchProvider(i), zkwire.FlagEphemeral)
	}
	r.nc.SetDeadline(time.Time{})
	const window = 32
	frame := zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: 1, Type: op}).Encode(e)
		(&zkwire.PathWatch{Path: path}).Encode(e)
	})
	done := make(chan error, 1)
	inFlight := make(chan struct{}, window)
	br := bufio.NewReaderSize(r.br, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		var buf []byte
		for i := 0; i < b.N; i++ {
			n, err := zkwire.ReadLength(br)
			if err == nil {
				buf, err = zkwire.ReadBody(br, n, zkwire.MaxPacket, buf)
			}
			<-inFlight
			if err != nil || len(buf) < minReply {
				done <- fmt.Errorf("reply %d: %d bytes, %v", i, len(buf), err)
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
