package gossiptest

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/internal/testutil"
)

// newTestNetwork returns a network closed when the test ends.
func newTestNetwork(t testing.TB, seed int64) *Network {
	n := NewNetwork(seed)
	t.Cleanup(n.Close)
	return n
}

// sink reads a transport's packets as memberlist would, and keeps them.
type sink struct {
	mu   sync.Mutex
	got  []*memberlist.Packet
	stop chan struct{}
	done chan struct{}
}

func newSink(t testing.TB, tr *Transport) *sink {
	s := &sink{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case p := <-tr.PacketCh():
				s.mu.Lock()
				s.got = append(s.got, p)
				s.mu.Unlock()
			case <-s.stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(s.stop); <-s.done })
	return s
}

func (s *sink) packets() []*memberlist.Packet {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*memberlist.Packet(nil), s.got...)
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// send writes n numbered packets from one transport to another. Every
// batch packets it waits for them to settle, so a fast sender cannot
// overflow the receiver's inbox and blur the loss a test measures.
func send(t testing.TB, from, to *Transport, n int) {
	t.Helper()
	const batch = 1000
	for i := range n {
		if _, err := from.WriteTo([]byte(strconv.Itoa(i)), to.Addr()); err != nil {
			t.Fatalf("WriteTo: %v", err)
		}
		if (i+1)%batch == 0 {
			testutil.Eventually(t, 5*time.Second, func() error { return settled(from.net) })
		}
	}
}

// settled reports whether every packet sent so far has been delivered or
// dropped, so counters can be compared exactly.
func settled(n *Network) error {
	s := n.TotalStats()
	if s.PacketsSent+s.PacketsDuplicated != s.PacketsReceived+s.PacketsDropped {
		return fmt.Errorf("in flight: sent %d + duplicated %d != received %d + dropped %d",
			s.PacketsSent, s.PacketsDuplicated, s.PacketsReceived, s.PacketsDropped)
	}
	return nil
}

func within(got, want, tolerance float64) bool {
	return got >= want-tolerance && got <= want+tolerance
}
