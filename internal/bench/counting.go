package bench

import (
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// CountingTransport is memberlist's own UDP/TCP transport with a count of
// every byte this member sends: packets, and what it writes on streams it
// dialled or accepted. Counting the sender only means a cluster's total is
// the sum over members with nothing counted twice.
//
// It implements memberlist.NodeAwareTransport, so memberlist uses it as is
// instead of wrapping it in a shim that would hide the node names.
type CountingTransport struct {
	inner    *memberlist.NetTransport
	sent     atomic.Uint64
	streamCh chan net.Conn
	done     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

var _ memberlist.NodeAwareTransport = (*CountingTransport)(nil)

// NewCountingTransport binds UDP and TCP on one free port of ip. The kernel
// picks the TCP port and UDP may find it taken, so it retries as memberlist
// does for its own dynamic ports.
func NewCountingTransport(ip string) (*CountingTransport, error) {
	cfg := &memberlist.NetTransportConfig{BindAddrs: []string{ip}, Logger: log.New(io.Discard, "", 0)}
	var nt *memberlist.NetTransport
	var err error
	for range 10 {
		if nt, err = memberlist.NewNetTransport(cfg); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("binding gossip transport on %s: %w", ip, err)
	}
	t := &CountingTransport{inner: nt, streamCh: make(chan net.Conn), done: make(chan struct{})}
	t.wg.Add(1)
	go t.forwardStreams()
	return t, nil
}

// BytesSent is everything this member has sent so far.
func (t *CountingTransport) BytesSent() uint64 { return t.sent.Load() }

// Port is the bound port (UDP and TCP).
func (t *CountingTransport) Port() int { return t.inner.GetAutoBindPort() }

func (t *CountingTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	return t.inner.FinalAdvertiseAddr(ip, port)
}

func (t *CountingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.sent.Add(uint64(len(b)))
	return t.inner.WriteTo(b, addr)
}

func (t *CountingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.sent.Add(uint64(len(b)))
	return t.inner.WriteToAddress(b, a)
}

func (t *CountingTransport) PacketCh() <-chan *memberlist.Packet { return t.inner.PacketCh() }

func (t *CountingTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (t *CountingTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	c, err := t.inner.DialAddressTimeout(a, timeout)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, sent: &t.sent}, nil
}

func (t *CountingTransport) StreamCh() <-chan net.Conn { return t.streamCh }

// Shutdown stops the listeners, then the forwarder. The order matters:
// NetTransport's accept loop blocks handing a connection over until someone
// takes it, and memberlist keeps reading StreamCh until after this returns.
func (t *CountingTransport) Shutdown() error {
	var err error
	t.once.Do(func() {
		err = t.inner.Shutdown()
		close(t.done)
		t.wg.Wait()
	})
	return err
}

// forwardStreams wraps accepted connections so replies are counted too.
func (t *CountingTransport) forwardStreams() {
	defer t.wg.Done()
	for {
		select {
		case c := <-t.inner.StreamCh():
			select {
			case t.streamCh <- &countingConn{Conn: c, sent: &t.sent}:
			case <-t.done:
				c.Close()
				return
			}
		case <-t.done:
			return
		}
	}
}

type countingConn struct {
	net.Conn
	sent *atomic.Uint64
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(uint64(n))
	return n, err
}

// Traffic measures bytes sent per member over a window.
type Traffic struct {
	ts    []*CountingTransport
	start []uint64
	at    time.Time
}

// StartTraffic begins a window over the given transports.
func StartTraffic(ts []*CountingTransport) *Traffic {
	tr := &Traffic{ts: ts, start: make([]uint64, len(ts)), at: time.Now()}
	for i, t := range ts {
		tr.start[i] = t.BytesSent()
	}
	return tr
}

// PerMember returns each member's send rate in bytes/s since the start.
func (tr *Traffic) PerMember() []float64 {
	secs := time.Since(tr.at).Seconds()
	out := make([]float64, len(tr.ts))
	for i, t := range tr.ts {
		out[i] = float64(t.BytesSent()-tr.start[i]) / secs
	}
	return out
}
