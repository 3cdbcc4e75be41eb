package zookeeper

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// A client that stops reading its replies stops being read (backpressure)
// once drainAt bytes are queued for it; notifications, which other
// goroutines queue and which cannot wait, disconnect it past maxPending
// (its session then lives for the grace like any dropped connection).
const (
	drainAt    = 4 << 20
	maxPending = 16 << 20
)

// conn is one client connection: serve reads and answers requests in
// order on its own goroutine; out.go queues and writes the frames, so
// notifications from other goroutines interleave with replies without
// reordering either.
type conn struct {
	s      *Server
	nc     net.Conn
	br     reader // reader goroutine only
	remote string

	// Guarded by s.mu.
	sess    *session
	watches map[watchKey]struct{}
	paceFor time.Duration // how long to wait before answering a refused request (refusals.go)

	outMu    sync.Mutex
	out      [][]byte  // frames in order: pooled chunks and shared encodings
	owned    []*[]byte // the pooled chunks among out, returned once written
	open     bool      // out's last element is a chunk frames may be added to
	pending  int       // bytes in out
	flushing bool      // a goroutine is writing out (out.go)
	closing  bool      // no more frames: close after flushing what is queued
	dead     bool
	enc      zkwire.Encoder // the frame being queued
	start    int            // where its body starts in enc.B
	tail     zkwire.Encoder // what follows a shared encoding
	// The slices of the batch last written, reused for the next.
	spareOut   [][]byte
	spareOwned []*[]byte
	drained    chan struct{} // a write finished
	buf        []byte        // reader goroutine only: the frame buffer
	// Reader goroutine only, under s.mu: scratch bodies of read replies.
	st   zkwire.Stat
	data zkwire.GetDataResponse
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, nc: nc, remote: nc.RemoteAddr().String(),
		watches: map[watchKey]struct{}{}, drained: make(chan struct{}, 1)}
	c.br.init(nc)
	return c
}

// enqueue queues one frame built by body, for the reader to write.
func (c *conn) enqueue(body func(*zkwire.Encoder)) { c.queue(body, false) }

// finish closes the connection once what is queued is written.
func (c *conn) finish() {
	c.outMu.Lock()
	c.closing = true
	c.outMu.Unlock()
}

// Close drops the connection now: the server's Close, through its
// connection set.
func (c *conn) Close() error {
	c.close()
	return nil
}

// close drops the connection now.
func (c *conn) close() {
	c.outMu.Lock()
	c.dead = true
	c.dropQueueLocked()
	c.outMu.Unlock()
	c.nc.Close()
}

// serve runs the connection: an optional four-letter word, the
// handshake, then requests until the client goes, the session ends or the
// server closes.
func (c *conn) serve() {
	err := c.run()
	c.br.release()
	c.outMu.Lock()
	closing := c.closing && !c.dead
	c.outMu.Unlock()
	if closing {
		c.flush() // closes it once the last reply is out
	} else {
		c.close()
	}
	c.s.connClosed(c, err)
}

func (c *conn) run() error {
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.MaxSessionTimeout))
	raw, err := zkwire.ReadLength(&c.br)
	if err != nil {
		return err
	}
	if w := zkwire.FourLetterWord(raw); w != "" {
		c.fourLetterWord(w)
		return errFourLetter
	}
	body, err := zkwire.ReadBody(&c.br, raw, zkwire.MaxPacket, nil)
	if err != nil {
		return err
	}
	var req zkwire.ConnectRequest
	if err := zkwire.Unmarshal(body, &req); err != nil {
		return errors.New("malformed ConnectRequest: " + err.Error())
	}
	if !c.s.waitReady(c) {
		return errServerClosed
	}
	timeout, ok := c.s.handshake(c, &req)
	if !ok {
		return errExpired
	}
	for {
		// Replies wait while a further request is already here, so a
		// burst of pipelined requests is answered with one write.
		if !c.br.frameBuffered() || c.pendingBytes() >= flushAt {
			c.flush()
		}
		if !c.waitDrained() {
			return errServerClosed
		}
		c.nc.SetReadDeadline(time.Now().Add(timeout))
		raw, err := zkwire.ReadLength(&c.br)
		if err == nil {
			c.buf, err = zkwire.ReadBody(&c.br, raw, zkwire.MaxPacket, c.buf)
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return errSilent
			}
			return err
		}
		if done := c.s.handle(c, c.buf); done {
			return errClosedSession
		}
		if cap(c.buf) > 64<<10 {
			c.buf = nil
		}
	}
}

func (c *conn) pendingBytes() int {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return c.pending
}

// waitDrained holds the reader while drainAt bytes of replies wait to be
// written: a client pipelining faster than it reads is slowed, not cut.
// false when the connection or server closed meanwhile.
func (c *conn) waitDrained() bool {
	for {
		c.outMu.Lock()
		pending, dead := c.pending, c.dead
		c.outMu.Unlock()
		if dead {
			return false
		}
		if pending < drainAt {
			return true
		}
		select {
		case <-c.drained:
		case <-c.s.ctx.Done():
			return false
		case <-time.After(c.s.cfg.WriteTimeout):
			// The writer is stuck on a client that reads nothing; its write
			// deadline will close the connection.
		}
	}
}

var (
	errFourLetter    = errors.New("four-letter word answered")
	errServerClosed  = errors.New("server closing")
	errExpired       = errors.New("session unknown or expired")
	errSilent        = errors.New("nothing received within the session timeout")
	errClosedSession = errors.New("closeSession")
)

func (c *conn) logEnd(err error) {
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), err == errFourLetter,
		err == errClosedSession, err == errServerClosed:
		c.s.log.Debug("client connection closed", "remote", c.remote, "why", err)
	default:
		c.s.log.Info("client connection closed", "remote", c.remote, "why", err)
	}
}

// waitReady holds the handshake until the agent's first sync with the
// cluster (bounded by ReadyWait), so a consumer starting with check=true
// does not see an empty registry.
func (s *Server) waitReady(c *conn) bool {
	deadline := time.Now().Add(s.cfg.ReadyWait)
	for !s.reg.Ready() && time.Now().Before(deadline) {
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return s.ctx.Err() == nil
}
