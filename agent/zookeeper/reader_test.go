package zookeeper

import (
	"bytes"
	"net"
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// The read buffer: frames of every size, arriving one by one or in bursts
// larger than the small buffer, read back whole and in order; a burst
// borrows the big buffer and an idle reader gives it back.
func TestReaderFramesAndBuffers(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	var rd reader
	rd.init(server)
	sizes := []int{8, 100, 600, 70 << 10, 8, 3, 20 << 10, 1}
	var frames [][]byte
	for i, n := range sizes {
		frames = append(frames, zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
			e.B = append(e.B, bytes.Repeat([]byte{byte('a' + i)}, n)...)
		}))
	}
	go func() {
		// One frame alone, then a burst of all of them, then a frame
		// written in two halves.
		client.Write(frames[0])
		client.Write(bytes.Join(frames, nil))
		client.Write(frames[2][:300])
		client.Write(frames[2][300:])
	}()
	var want [][]byte
	want = append(want, frames[0])
	want = append(want, frames...)
	want = append(want, frames[2])
	sawBig := false
	var buf []byte
	for i, f := range want {
		n, err := zkwire.ReadLength(&rd)
		if err == nil {
			buf, err = zkwire.ReadBody(&rd, n, zkwire.MaxPacket, buf)
		}
		if err != nil || !bytes.Equal(buf, f[4:]) {
			t.Fatalf("frame %d: %d bytes, err %v; want %d bytes", i, len(buf), err, len(f)-4)
		}
		sawBig = sawBig || rd.big != nil
	}
	if !sawBig {
		t.Error("a burst past the small buffer never borrowed the big one")
	}
	if rd.Buffered() != 0 || rd.frameBuffered() {
		t.Fatalf("%d bytes left buffered", rd.Buffered())
	}
	go client.Write(zkwire.AppendPacket(nil, func(e *zkwire.Encoder) { e.Int(7) }))
	if _, err := zkwire.ReadPacket(&rd, zkwire.MaxPacket); err != nil {
		t.Fatal(err)
	}
	if rd.big != nil {
		t.Error("a reader that drained a short read still holds the big buffer")
	}
	rd.release()
	if len(rd.buf) != smallRead {
		t.Errorf("buffer of %d bytes after release, want %d", len(rd.buf), smallRead)
	}
}
