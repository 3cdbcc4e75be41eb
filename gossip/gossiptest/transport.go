package gossiptest

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

var errShutdown = errors.New("gossiptest: transport is shut down")

// Transport is one node's attachment to a Network. It implements
// memberlist.NodeAwareTransport, so memberlist uses it directly rather than
// through its shim for plain Transports.
type Transport struct {
	net      *Network
	name     string
	addr     addr
	ip       net.IP
	port     int
	packetCh chan *memberlist.Packet
	streamCh chan net.Conn
	in       inbox
	stats    counters

	done     chan struct{} // closed when Shutdown begins
	stopOnce sync.Once
	loopDone chan struct{} // closed when the delivery loop has returned
}

var _ memberlist.NodeAwareTransport = (*Transport)(nil)

func newTransport(n *Network, name, hostPort string) *Transport {
	host, portStr, _ := net.SplitHostPort(hostPort)
	port, _ := strconv.Atoi(portStr)
	t := &Transport{
		net:  n,
		name: name,
		addr: addr(hostPort),
		ip:   net.ParseIP(host),
		port: port,
		// Unbuffered like memberlist's own transports: the delivery loop
		// holds packets, bounded by inboxLimit, until memberlist reads.
		packetCh: make(chan *memberlist.Packet),
		streamCh: make(chan net.Conn),
		in:       newInbox(),
		done:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	go t.deliverLoop()
	return t
}

// Name returns the node name the transport was created with.
func (t *Transport) Name() string { return t.name }

// Addr returns the transport's "ip:port" address, as given to
// memberlist.Join.
func (t *Transport) Addr() string { return string(t.addr) }

// Stats returns a snapshot of the transport's counters.
func (t *Transport) Stats() Stats { return t.stats.snapshot() }

// FinalAdvertiseAddr returns the transport's own address whatever is
// configured: advertising any other would make the node unreachable here.
func (t *Transport) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	return slices.Clone(t.ip), t.port, nil
}

// WriteTo sends a packet; see WriteToAddress.
func (t *Transport) WriteTo(b []byte, addr string) (time.Time, error) {
	return t.WriteToAddress(b, memberlist.Address{Addr: addr})
}

// WriteToAddress sends a packet, subject to the network's faults. Like UDP it
// reports no error for a packet that is lost, including one sent to a node
// that has shut down; it fails only for an address no node ever had, which
// in a test is a bug worth hearing about, or after Shutdown.
func (t *Transport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	if t.stopped() {
		return time.Time{}, errShutdown
	}
	now := time.Now()
	t.stats.packetsSent.Add(1)
	t.stats.packetBytesSent.Add(uint64(len(b)))
	dest := t.net.lookup(a.Addr)
	if dest == nil {
		t.stats.packetsDropped.Add(1)
		return now, fmt.Errorf("gossiptest: no node at %s", a.String())
	}
	delays := t.net.packetFate(t.name, dest.name)
	if len(delays) == 0 {
		t.stats.packetsDropped.Add(1)
	}
	if len(delays) > 1 {
		t.stats.packetsDuplicated.Add(uint64(len(delays) - 1))
	}
	for _, d := range delays {
		// Each copy gets its own buffer: the sender may reuse b, and
		// receivers may decrypt or decompress in place.
		dest.enqueue(t, append([]byte(nil), b...), now.Add(d))
	}
	return now, nil
}

// PacketCh returns the channel memberlist reads incoming packets from.
func (t *Transport) PacketCh() <-chan *memberlist.Packet { return t.packetCh }

// StreamCh returns the channel memberlist reads incoming streams from.
func (t *Transport) StreamCh() <-chan net.Conn { return t.streamCh }

// Shutdown detaches the node: packets still in flight to it are dropped, its
// open streams are closed (as when a host goes down), and sends to it are
// lost from then on. It waits for the transport's goroutine to return and is
// idempotent; memberlist calls it from Memberlist.Shutdown.
func (t *Transport) Shutdown() error {
	t.stopOnce.Do(func() {
		close(t.done)
		closeAll(t.net.forgetStreamsOf(t))
		<-t.loopDone
	})
	return nil
}

func (t *Transport) stopped() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// addr is a node's "ip:port" address as a net.Addr; memberlist takes
// Packet.From.String() as the address to answer to.
type addr string

func (a addr) Network() string { return "gossiptest" }
func (a addr) String() string  { return string(a) }
