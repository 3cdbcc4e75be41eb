package gossiptest

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/memberlist"
)

var errCut = errors.New("gossiptest: link cut by partition")

// DialTimeout opens a stream; see DialAddressTimeout.
func (t *Transport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

// DialAddressTimeout opens a stream to the node at a.Addr. It fails at once
// if the link is cut or the node is down (a real dial across a partition
// would more likely wait out the timeout; failing fast keeps tests quick and
// memberlist treats both alike), and with a timeout error if the network's
// delay exceeds timeout. A timeout of zero means none.
func (t *Transport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	conn, err := t.dial(a.Addr, timeout)
	if err != nil {
		t.stats.streamsRefused.Add(1)
		return nil, &net.OpError{Op: "dial", Net: "gossiptest", Source: t.addr, Addr: addr(a.Addr), Err: err}
	}
	t.stats.streamsDialed.Add(1)
	return conn, nil
}

func (t *Transport) dial(hostPort string, timeout time.Duration) (net.Conn, error) {
	if t.stopped() {
		return nil, errShutdown
	}
	dest := t.net.lookup(hostPort)
	if dest == nil || dest.stopped() {
		return nil, syscall.ECONNREFUSED
	}
	delay, ok := t.net.dialFate(t.name, dest.name)
	if !ok {
		return nil, errCut
	}
	if t.net.hung(t.name) {
		return nil, errHung
	}
	var expired <-chan time.Time
	if timeout > 0 {
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		expired = deadline.C
	}
	if delay > 0 {
		handshake := time.NewTimer(delay)
		defer handshake.Stop()
		if err := t.await(handshake.C, expired, dest); err != nil {
			return nil, err
		}
	}
	if t.net.hung(dest.name) {
		c, err := t.net.connectHung(t, dest)
		if err == nil {
			dest.stats.streamsAccepted.Add(1)
		}
		return c, err
	}
	local, remote, err := t.net.connect(t, dest)
	if err != nil {
		return nil, err
	}
	select {
	case dest.streamCh <- remote:
		dest.stats.streamsAccepted.Add(1)
		return local, nil
	case <-expired:
		err = os.ErrDeadlineExceeded
	case <-t.done:
		err = errShutdown
	case <-dest.done:
		err = syscall.ECONNREFUSED
	}
	_ = local.Close()
	_ = remote.Close()
	return nil, err
}

// await waits out a dial's delay, failing if the dial times out or either
// end shuts down first.
func (t *Transport) await(ready, expired <-chan time.Time, dest *Transport) error {
	select {
	case <-ready:
		return nil
	case <-expired:
		return os.ErrDeadlineExceeded
	case <-t.done:
		return errShutdown
	case <-dest.done:
		return syscall.ECONNREFUSED
	}
}

// connect makes the two ends of a stream and registers them so a partition
// or shutdown can close them. It re-checks the link and both ends, which may
// have changed during the dial's delay; doing so under mu, which Partition
// and Shutdown take to collect the streams to close, means no stream can
// slip in after them and stay open.
func (n *Network) connect(from, to *Transport) (local, remote *streamConn, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case from.stopped():
		return nil, nil, errShutdown
	case to.stopped():
		return nil, nil, syscall.ECONNREFUSED
	case n.blockedLocked(from.name, to.name):
		return nil, nil, errCut
	}
	p1, p2 := net.Pipe()
	local = &streamConn{Conn: p1, net: n, owner: from, peer: to}
	remote = &streamConn{Conn: p2, net: n, owner: to, peer: from}
	n.streams[local] = struct{}{}
	n.streams[remote] = struct{}{}
	return local, remote, nil
}

// cutStreamsLocked unregisters and returns the streams across cut links.
func (n *Network) cutStreamsLocked() []*streamConn {
	var cut []*streamConn
	for c := range n.streams {
		if n.blockedLocked(c.owner.name, c.peer.name) {
			delete(n.streams, c)
			cut = append(cut, c)
		}
	}
	return cut
}

// forgetStreamsOf unregisters and returns the streams with an end at t.
func (n *Network) forgetStreamsOf(t *Transport) []*streamConn {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.forgetStreamsOfLocked(func(c *streamConn) bool { return c.owner == t || c.peer == t })
}

// forgetStreamsOfLocked unregisters and returns the streams that match.
func (n *Network) forgetStreamsOfLocked(match func(*streamConn) bool) []*streamConn {
	var gone []*streamConn
	for c := range n.streams {
		if match(c) {
			delete(n.streams, c)
			gone = append(gone, c)
		}
	}
	return gone
}

// closeAll closes streams outside Network.mu, which Close takes.
func closeAll(conns []*streamConn) {
	for _, c := range conns {
		_ = c.Close()
	}
}

// streamConn is one end of a stream. Closing either end makes reads at the
// other return io.EOF and writes fail, which is how a cut or shutdown shows
// to memberlist. It counts the bytes that pass through it.
type streamConn struct {
	net.Conn // one end of a net.Pipe, which provides deadlines
	net      *Network
	owner    *Transport // the node holding this end
	peer     *Transport
	hungPeer bool // a stream to a hung node (hang.go), closed by Resume
	once     sync.Once
}

func (c *streamConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.owner.stats.streamBytesReceived.Add(uint64(n))
	return n, err
}

func (c *streamConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.owner.stats.streamBytesSent.Add(uint64(n))
	return n, err
}

func (c *streamConn) Close() error {
	c.once.Do(func() {
		c.net.mu.Lock()
		delete(c.net.streams, c)
		c.net.mu.Unlock()
	})
	return c.Conn.Close()
}

func (c *streamConn) LocalAddr() net.Addr  { return c.owner.addr }
func (c *streamConn) RemoteAddr() net.Addr { return c.peer.addr }
