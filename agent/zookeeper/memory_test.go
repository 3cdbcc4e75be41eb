package zookeeper

import (
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// BenchmarkSessionMemory: the door's heap per session, for 1,000 sessions
// each holding the three watches a Dubbo consumer keeps (a providers
// child watch, a configurator exists watch, a mapping data watch). The
// clients are bare sockets, so the figure is the server's cost plus a
// socket's (the client end's net.TCPConn, ~0.3 KB):
//
//	go test -run '^$' -bench SessionMemory -benchtime 1x .
func BenchmarkSessionMemory(b *testing.B) {
	const n = 1000
	s, _ := startServer(b)
	r := dialRaw(b, s)
	r.handshake(false)
	for i, p := range []string{"/dubbo", "/dubbo/fan.Api", "/dubbo/fan.Api/providers", "/dubbo/config",
		"/dubbo/config/dubbo", "/dubbo/config/dubbo/fan.Api.configurators", "/dubbo/mapping", "/dubbo/mapping/fan.Api"} {
		create(b, r, int32(i+1), p, 0)
	}
	watches := []struct {
		op   int32
		path string
	}{{zkwire.OpGetChildren2, "/dubbo/fan.Api/providers"}, {zkwire.OpExists, "/dubbo/config/dubbo/fan.Api.configurators"},
		{zkwire.OpGetData, "/dubbo/mapping/fan.Api"}}
	for range b.N {
		before := heapAfterGC()
		conns := make([]net.Conn, n)
		for i := range conns {
			nc, err := net.Dial("tcp", s.Addr())
			if err != nil {
				b.Fatal(err)
			}
			conns[i] = nc
			frames := zkwire.AppendPacket(nil, (&zkwire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}).Encode)
			for j, w := range watches {
				frames = zkwire.AppendPacket(frames, func(e *zkwire.Encoder) {
					(&zkwire.RequestHeader{Xid: int32(j + 1), Type: w.op}).Encode(e)
					(&zkwire.PathWatch{Path: w.path, Watch: true}).Encode(e)
				})
			}
			if _, err := nc.Write(frames); err != nil {
				b.Fatal(err)
			}
			for range 1 + len(watches) { // the handshake's and each watch's reply
				var l [4]byte
				if _, err := io.ReadFull(nc, l[:]); err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyN(io.Discard, nc, int64(binary.BigEndian.Uint32(l[:]))); err != nil {
					b.Fatal(err)
				}
			}
		}
		s.mu.Lock()
		got := s.watches.n
		s.mu.Unlock()
		if got != 3*n {
			b.Fatalf("%d watches armed, want %d", got, 3*n)
		}
		b.ReportMetric((heapAfterGC()-before)/n, "B/session")
		for _, nc := range conns {
			nc.Close()
		}
	}
}

func heapAfterGC() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}
