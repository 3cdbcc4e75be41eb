package gossiptest

import (
	"errors"
	"net"
	"testing"
	"testing/synctest"
	"time"
)

// A hung node's kernel accepts a stream and what is written to it, but the
// node never sees the stream and never answers; its packets are lost both
// ways; Resume brings it back and closes the streams left unanswered.
func TestHangAcceptsStreamsButNeverAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNetwork(t, 1)
		a, b := n.NewTransport("a"), n.NewTransport("b")
		n.Hang("b")

		c, err := a.DialTimeout(b.Addr(), time.Second)
		if err != nil {
			t.Fatalf("dial to a hung node: %v, want it accepted", err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatalf("write to a hung node: %v, want it buffered", err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		var ne net.Error
		if _, err := c.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read from a hung node: %v, want a timeout", err)
		}
		select {
		case <-b.StreamCh():
			t.Fatal("the hung node's memberlist was handed the stream")
		default:
		}
		if _, err := b.DialTimeout(a.Addr(), time.Second); err == nil {
			t.Error("a hung node dialled out")
		}
		in := newSink(t, b)
		out := newSink(t, a)
		send(t, a, b, 3)
		send(t, b, a, 3)
		synctest.Wait()
		if in.count() != 0 || out.count() != 0 {
			t.Errorf("packets crossed a hang: %d in, %d out", in.count(), out.count())
		}

		n.Resume("b")
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Error("a stream left unanswered by the hang still reads after Resume")
		}
		send(t, a, b, 2)
		synctest.Wait()
		if in.count() != 2 {
			t.Errorf("after Resume the node got %d packets, want 2", in.count())
		}
	})
}
