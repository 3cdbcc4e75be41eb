package gossiptest

import (
	"errors"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

func TestPartitionCutsPacketsBothWays(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 1)
	tr := map[string]*Transport{}
	sinks := map[string]*sink{}
	for _, name := range []string{"a", "b", "c"} {
		tr[name] = n.NewTransport(name)
		sinks[name] = newSink(t, tr[name])
	}
	n.Partition([]string{"a"}, []string{"b", "c"})
	send(t, tr["a"], tr["b"], 10)
	send(t, tr["c"], tr["a"], 10)
	send(t, tr["b"], tr["c"], 10) // same side: delivered
	testutil.Eventually(t, 5*time.Second, func() error { return settled(n) })
	if sinks["a"].count() != 0 || sinks["b"].count() != 0 {
		t.Errorf("packets crossed the partition: a got %d, b got %d", sinks["a"].count(), sinks["b"].count())
	}
	if got := sinks["c"].count(); got != 10 {
		t.Errorf("c got %d packets from its own side, want 10", got)
	}

	n.Heal()
	send(t, tr["a"], tr["b"], 10)
	testutil.Eventually(t, 5*time.Second, func() error {
		if got := sinks["b"].count(); got != 10 {
			return errors.New("b has not received a's packets after Heal")
		}
		return nil
	})
}

// A packet in flight when its link is cut is lost, as on a real wire.
func TestPartitionDropsPacketsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNetwork(t, 1)
		a, b := n.NewTransport("a"), n.NewTransport("b")
		sb := newSink(t, b)
		n.SetDelay(10*time.Millisecond, 10*time.Millisecond)
		send(t, a, b, 5)
		n.Isolate("b")
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if got := sb.count(); got != 0 {
			t.Errorf("%d packets crossed a link cut while they were in flight", got)
		}
		if got := a.Stats().PacketsDropped; got != 5 {
			t.Errorf("PacketsDropped = %d, want 5", got)
		}
	})
}

// accept answers one dial on tr with the stream memberlist would get.
func accept(tr *Transport) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() { ch <- <-tr.StreamCh() }()
	return ch
}

func TestPartitionRefusesAndBreaksStreams(t *testing.T) {
	testutil.CheckLeaks(t)
	n := newTestNetwork(t, 1)
	a, b := n.NewTransport("a"), n.NewTransport("b")

	incoming := accept(b)
	local, err := a.DialTimeout(b.Addr(), time.Second)
	if err != nil {
		t.Fatalf("dial before the partition: %v", err)
	}
	defer local.Close()
	remote := <-incoming
	defer remote.Close()
	if remote.RemoteAddr().String() != a.Addr() || local.RemoteAddr().String() != b.Addr() {
		t.Errorf("stream ends report %s and %s, want the nodes' addresses", remote.RemoteAddr(), local.RemoteAddr())
	}
	go func() { _, _ = local.Write([]byte("hello")) }()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(remote, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("read %q, %v before the partition", buf, err)
	}

	n.Partition([]string{"a"}, []string{"b"})
	if _, err := remote.Read(buf); err == nil {
		t.Error("a stream across the partition still reads")
	}
	if _, err := local.Write(buf); err == nil {
		t.Error("a stream across the partition still writes")
	}
	if _, err := b.DialTimeout(a.Addr(), time.Second); err == nil {
		t.Error("dial across the partition succeeded")
	}
	if s := b.Stats(); s.StreamsRefused != 1 {
		t.Errorf("StreamsRefused = %d, want 1", s.StreamsRefused)
	}

	n.Heal()
	incoming = accept(a)
	again, err := b.DialTimeout(a.Addr(), time.Second)
	if err != nil {
		t.Fatalf("dial after Heal: %v", err)
	}
	_ = again.Close()
	_ = (<-incoming).Close()
}

func TestDialTimesOutOnSlowLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newTestNetwork(t, 1)
		a, b := n.NewTransport("a"), n.NewTransport("b")
		n.SetDelay(time.Second, time.Second)
		start := time.Now()
		_, err := a.DialTimeout(b.Addr(), 100*time.Millisecond)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("dial over a 1s link with a 100ms timeout: %v, want a timeout", err)
		}
		if took := time.Since(start); took != 100*time.Millisecond {
			t.Errorf("dial gave up after %v, want 100ms", took)
		}
	})
}

// Shutdown stops the delivery goroutine even with packets in flight and a
// reader that never comes, closes the node's streams, and accounts for every
// packet.
func TestShutdownReleasesEverything(t *testing.T) {
	testutil.CheckLeaks(t)
	n := NewNetwork(1)
	a, b, c := n.NewTransport("a"), n.NewTransport("b"), n.NewTransport("c")
	n.SetDelay(time.Hour, time.Hour)
	send(t, a, b, 10)
	n.SetDelay(0, 0)
	send(t, a, c, 10) // nobody reads c: its loop blocks handing one over

	incoming := accept(b)
	conn, err := a.DialTimeout(b.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	peer := <-incoming
	_ = b.Shutdown()
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("stream to a shut-down node still open")
	}
	if _, err := a.WriteTo([]byte("x"), b.Addr()); err != nil {
		t.Errorf("packet to a shut-down node: %v; want it silently lost", err)
	}
	if _, err := a.DialTimeout(b.Addr(), time.Second); err == nil {
		t.Error("dial to a shut-down node succeeded")
	}
	_ = peer.Close()
	_ = conn.Close()

	n.Close()
	n.Close() // idempotent
	if _, err := a.WriteTo([]byte("x"), c.Addr()); err == nil {
		t.Error("WriteTo after Shutdown succeeded")
	}
	if err := settled(n); err != nil {
		t.Error(err)
	}
}
