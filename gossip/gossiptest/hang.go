package gossiptest

import (
	"errors"
	"net"
	"sync/atomic"
)

// A hung node models a process stopped with SIGSTOP, or one too wedged to
// run: its kernel still completes the TCP handshake and buffers what is
// written, but the process reads nothing and answers nothing. Telling a
// hung member from a live one therefore takes the member's own reply; an
// accepted connection proves nothing.

// hungBuffer is how many bytes a stream to a hung node accepts before
// writes block, as a kernel's socket buffers would.
const hungBuffer = 256 << 10

var errHung = errors.New("gossiptest: node is hung")

// Hang stops the named node from doing anything on the network until
// Resume: packets to and from it are lost (including those in flight),
// streams it dials fail, and streams dialled to it open but are never
// handed to its memberlist: up to hungBuffer bytes written to one are
// accepted and dropped, more block, and reads wait for the deadline. Its
// open streams are closed, a simplification: a stopped process's
// connections would stay open and silent.
func (n *Network) Hang(name string) {
	n.mu.Lock()
	n.faults.hung[name] = true
	var gone []*streamConn
	for c := range n.streams {
		if c.owner.name == name || c.peer.name == name {
			delete(n.streams, c)
			gone = append(gone, c)
		}
	}
	n.mu.Unlock()
	closeAll(gone)
}

// Resume ends Hang: the node's packets flow again, and the streams dialled
// to it while it was hung are closed, as a process that wakes to a backlog
// of stale connections might drop them.
func (n *Network) Resume(name string) {
	n.mu.Lock()
	delete(n.faults.hung, name)
	gone := n.forgetStreamsOfLocked(func(c *streamConn) bool { return c.hungPeer && c.peer.name == name })
	n.mu.Unlock()
	closeAll(gone)
}

func (n *Network) hungLocked(name string) bool { return n.faults.hung[name] }

func (n *Network) hung(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hungLocked(name)
}

// connectHung makes a stream to a hung node: the dialler's end of a pipe
// whose other end nobody reads, registered so Resume, Shutdown and Close
// end it.
func (n *Network) connectHung(from, to *Transport) (net.Conn, error) {
	local, remote, err := n.connect(from, to)
	if err != nil {
		return nil, err
	}
	local.hungPeer, remote.hungPeer = true, true
	return &hungConn{streamConn: local}, nil
}

// hungConn is a stream to a hung node: writes land in the kernel's buffer
// until it is full, reads get nothing.
type hungConn struct {
	*streamConn
	buffered atomic.Int64
}

func (c *hungConn) Write(b []byte) (int, error) {
	if c.buffered.Add(int64(len(b))) <= hungBuffer {
		c.owner.stats.streamBytesSent.Add(uint64(len(b)))
		return len(b), nil
	}
	// Full: the pipe's write blocks until the deadline or a close, since
	// nobody reads the other end.
	return c.streamConn.Write(b)
}
