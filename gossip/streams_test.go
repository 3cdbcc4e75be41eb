package gossip

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

var streamTargets atomic.Int64

// streamTarget is a member on loopback whose stream limits are small and
// counted for loopback peers too, with memberlist's own stream timeout an
// hour, so only our bounds can end a stream. Each is named after the test
// and its number: two live members of one name never merge (duplicate.go).
func streamTarget(t *testing.T) *Gossip {
	t.Helper()
	cfg, _ := Profile("local")
	cfg.Table = routes.NewTable(fmt.Sprintf("target-%d", streamTargets.Add(1)), 1)
	cfg.Memberlist.BindAddr = "127.0.0.1"
	cfg.Memberlist.BindPort = 0
	cfg.Memberlist.TCPTimeout = time.Hour
	cfg.Memberlist.LogOutput = io.Discard
	cfg.Streams = StreamLimits{MaxStreamsPerPeer: 4, StreamIdleTimeout: time.Second, MaxStreamBytes: 1 << 20, loopbackToo: true}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Shutdown() })
	return g
}

// Without --encrypt anyone reaching the gossip port is a peer, and
// memberlist kept every stream a peer opened for as long as it liked (its
// stream timeout), with buffers sized from headers. One peer opening many
// silent streams now holds at most MaxStreamsPerPeer, each only until it
// goes idle.
func TestManyStreamsFromOnePeerAreBounded(t *testing.T) {
	g := streamTarget(t)
	const n = 20
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", g.LocalAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	// Past the fourth, streams are closed as they arrive: their reads end.
	closed := make(chan int, n)
	for i, c := range conns {
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			_, _ = c.Read(make([]byte, 1))
			closed <- i
		}()
	}
	refused := time.After(10 * time.Second)
	for range n - 4 {
		select {
		case <-closed:
		case <-refused:
			t.Fatalf("a peer holds %d streams open, want at most 4", n-len(closed))
		}
	}
	if open := g.streams.openStreams(); open > 4 {
		t.Fatalf("%d streams open from one peer, want at most 4", open)
	}
	// The four admitted send nothing: they end at the idle timeout, not
	// at memberlist's hour.
	testutil.Eventually(t, 10*time.Second, func() error {
		if open := g.streams.openStreams(); open != 0 {
			return errorString("idle streams still open")
		}
		return nil
	})
	for range 4 {
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("an idle stream was not closed")
		}
	}
	// And the member still takes streams: a peer joins.
	peer := streamTarget(t)
	if _, err := peer.Join([]string{g.LocalAddr()}); err != nil {
		t.Fatalf("join after the flood: %v", err)
	}
}

// A stream that claims a 16 MiB user message is cut after MaxStreamBytes:
// the sender's writes fail long before the 16 MiB are through.
func TestStreamBytesAreBounded(t *testing.T) {
	g := streamTarget(t)
	c, err := net.Dial("tcp", g.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const claimed = 16 << 20
	// memberlist's userMsg (8), then its msgpack header {UserMsgLen: claimed}.
	hdr := []byte{8, 0x81, 0xa0 | 10}
	hdr = append(hdr, "UserMsgLen"...)
	hdr = append(hdr, 0xce)
	hdr = binary.BigEndian.AppendUint32(hdr, claimed)
	if _, err := c.Write(hdr); err != nil {
		t.Fatal(err)
	}
	_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	chunk := make([]byte, 64<<10)
	sent := 0
	for sent < claimed {
		n, err := c.Write(chunk)
		sent += n
		if err != nil {
			break
		}
	}
	if sent >= claimed {
		t.Fatalf("the agent read all %d bytes of one stream, limit %d", sent, 1<<20)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if open := g.streams.openStreams(); open != 0 {
			return errorString("the cut stream is still open")
		}
		return nil
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }
