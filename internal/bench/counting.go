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
	inner   memberlist.NodeAwareTransport
	net     *memberlist.NetTransport // nil when wrapping another transport
	sent    atomic.Uint64
	sources Sources
	serf    bool // user messages are serf's, not namecast's
	// unclassified turns off Sources (the bytes are still counted): P6
	// classifies only inside its idle window, since decoding every
	// packet, LZW included, of thousands of members is a good part of
	// the simulation's CPU and tells nothing outside that window.
	unclassified atomic.Bool
	// membership counts packets carrying membership gossip (alive,
	// suspect, dead), while watchMembership is on (P6's settling).
	watchMembership atomic.Bool
	membership      atomic.Uint64
	streamCh        chan net.Conn
	done            chan struct{}
	wg              sync.WaitGroup
	once            sync.Once
}

var _ memberlist.NodeAwareTransport = (*CountingTransport)(nil)

// NewCountingTransport binds UDP and TCP on one free port of ip. The kernel
// picks the TCP port and UDP may find it taken, so it retries as memberlist
// does for its own dynamic ports.
func NewCountingTransport(ip string) (*CountingTransport, error) {
	return newCountingTransport(ip, false)
}

func newCountingTransport(ip string, serf bool) (*CountingTransport, error) {
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
	return WrapCounting(nt, nt, serf), nil
}

// WrapCounting counts what inner sends (an in-memory transport, in P6);
// nt is inner when it is memberlist's NetTransport, else nil. serf says
// whose user messages to expect, for Sources.
func WrapCounting(inner memberlist.NodeAwareTransport, nt *memberlist.NetTransport, serf bool) *CountingTransport {
	t := &CountingTransport{inner: inner, net: nt, serf: serf, streamCh: make(chan net.Conn), done: make(chan struct{})}
	t.wg.Add(1)
	go t.forwardStreams()
	return t
}

// Sources is what this member sent, by class (see sources.go).
func (t *CountingTransport) Sources() map[string]uint64 { return t.sources.Snapshot() }

// SetClassify turns the per-class count (Sources) on or off; it is on
// unless turned off. Streams are classed by their first write, so one
// begun while it was off counts as "other".
func (t *CountingTransport) SetClassify(on bool) { t.unclassified.Store(!on) }

// WatchMembership turns on or off the count of packets that carry
// membership gossip (MembershipPackets).
func (t *CountingTransport) WatchMembership(on bool) { t.watchMembership.Store(on) }

// MembershipPackets is how many packets carrying alive, suspect or dead
// messages this member sent while WatchMembership was on.
func (t *CountingTransport) MembershipPackets() uint64 { return t.membership.Load() }

func (t *CountingTransport) countPacket(b []byte) {
	t.sent.Add(uint64(len(b)))
	if !t.unclassified.Load() {
		t.sources.countPacket(b, t.serf)
	}
	if t.watchMembership.Load() {
		parts := map[int]int{}
		classify(b, t.serf, parts)
		if parts[srcIndex(SrcMembership)] > 0 {
			t.membership.Add(1)
		}
	}
}

// BytesSent is everything this member has sent so far.
func (t *CountingTransport) BytesSent() uint64 { return t.sent.Load() }

// Port is the bound port (UDP and TCP).
func (t *CountingTransport) Port() int { return t.net.GetAutoBindPort() }

func (t *CountingTransport) FinalAdvertiseAddr(ip string, port int) (net.IP, int, error) {
	return t.inner.FinalAdvertiseAddr(ip, port)
}

func (t *CountingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.countPacket(b)
	return t.inner.WriteTo(b, addr)
}

func (t *CountingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.countPacket(b)
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
	return t.wrapConn(c), nil
}

func (t *CountingTransport) wrapConn(c net.Conn) net.Conn {
	return &countingConn{Conn: c, sent: &t.sent, sources: &t.sources, serf: t.serf, class: -1, off: &t.unclassified}
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
			case t.streamCh <- t.wrapConn(c):
			case <-t.done:
				c.Close()
				return
			}
		case <-t.done:
			return
		}
	}
}

// countingConn charges a stream to the class of its first message; a
// label header written alone is held until that message is seen.
type countingConn struct {
	net.Conn
	sent    *atomic.Uint64
	sources *Sources
	serf    bool
	mu      sync.Mutex
	class   int // -1 until known
	off     *atomic.Bool
	held    uint64
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(uint64(n))
	c.mu.Lock()
	if c.class < 0 {
		if len(b) >= 2 && b[0] == mlLabel && len(b) == 2+int(b[1]) {
			c.held += uint64(n)
			c.mu.Unlock()
			return n, err
		}
		if c.off.Load() {
			c.class = srcIndex(SrcOther)
		} else {
			c.class = streamClass(b, c.serf)
		}
	}
	c.sources.n[c.class].Add(uint64(n) + c.held)
	c.held = 0
	c.mu.Unlock()
	return n, err
}

// Traffic measures bytes sent per member over a window.
type Traffic struct {
	ts      []*CountingTransport
	start   []uint64
	sources map[string]uint64 // summed over members at the start
	at      time.Time
}

// StartTraffic begins a window over the given transports.
func StartTraffic(ts []*CountingTransport) *Traffic {
	tr := &Traffic{ts: ts, start: make([]uint64, len(ts)), at: time.Now()}
	for i, t := range ts {
		tr.start[i] = t.BytesSent()
	}
	tr.sources = sumSources(ts)
	return tr
}

func sumSources(ts []*CountingTransport) map[string]uint64 {
	sum := map[string]uint64{}
	for _, t := range ts {
		for k, v := range t.Sources() {
			sum[k] += v
		}
	}
	return sum
}

// BySource is the mean send rate per member, in bytes/s, of each class of
// traffic since the start (sources.go).
func (tr *Traffic) BySource() map[string]float64 {
	secs := time.Since(tr.at).Seconds()
	out := map[string]float64{}
	for k, v := range sumSources(tr.ts) {
		if d := v - tr.sources[k]; d > 0 {
			out[k] = float64(d) / secs / float64(len(tr.ts))
		}
	}
	return out
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
