package zookeeper

import (
	"bufio"
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

// chunk is the size frames are batched in: small replies share chunks, a
// large one (a listing of 1,000 provider URLs is ~110 KB) fills its own,
// so queuing never copies what is already queued.
const chunk = 16 << 10

// conn is one client connection: serve reads and answers requests in
// order on its own goroutine; writeLoop sends what is queued, so
// notifications from other goroutines interleave with replies without
// reordering either.
type conn struct {
	s      *Server
	nc     net.Conn
	br     *bufio.Reader
	remote string

	// Guarded by s.mu.
	sess    *session
	watches map[watchKey]struct{}

	outMu   sync.Mutex
	out     [][]byte // chunks of whole frames, in order
	pending int      // bytes in out
	closing bool     // no more writes: close after flushing what is queued
	dead    bool
	wake    chan struct{}
	drained chan struct{} // a write finished
	buf     []byte        // reader goroutine only: the frame buffer
}

func newConn(s *Server, nc net.Conn) *conn {
	return &conn{s: s, nc: nc, br: bufio.NewReaderSize(nc, 4<<10), remote: nc.RemoteAddr().String(),
		watches: map[watchKey]struct{}{}, wake: make(chan struct{}, 1), drained: make(chan struct{}, 1)}
}

// enqueue queues one frame built by body. It never blocks; a notification
// (notify) that finds maxPending queued closes the connection.
func (c *conn) enqueue(body func(*zkwire.Encoder)) { c.queue(body, false) }

func (c *conn) queue(body func(*zkwire.Encoder), notification bool) {
	c.outMu.Lock()
	if c.dead || c.closing {
		c.outMu.Unlock()
		return
	}
	n := len(c.out)
	if n == 0 || len(c.out[n-1]) >= chunk {
		c.out = append(c.out, make([]byte, 0, chunk))
		n++
	}
	before := len(c.out[n-1])
	c.out[n-1] = zkwire.AppendPacket(c.out[n-1], body)
	c.pending += len(c.out[n-1]) - before
	over := notification && c.pending > maxPending
	if over {
		c.dead = true
		c.out, c.pending = nil, 0
	}
	c.outMu.Unlock()
	if over {
		c.s.log.Warn("client stopped reading its replies; closing its connection", "remote", c.remote, "queued_bytes", maxPending)
		c.nc.Close()
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// reply queues a reply header, with body when err is 0. s.mu held, so the
// zxid is current and the reply follows every notification already queued.
func (c *conn) reply(xid, err int32, body zkwire.Record) {
	zxid := c.s.zxid
	c.enqueue(func(e *zkwire.Encoder) {
		(&zkwire.ReplyHeader{Xid: xid, Zxid: zxid, Err: err}).Encode(e)
		if err == 0 && body != nil {
			body.Encode(e)
		}
	})
}

// notify queues a watch notification.
func (c *conn) notify(ev int32, path string, zxid int64) {
	c.s.stats.notifications.Add(1)
	c.queue(func(e *zkwire.Encoder) {
		(&zkwire.ReplyHeader{Xid: zkwire.XidNotification, Zxid: zxid}).Encode(e)
		(&zkwire.WatcherEvent{Type: ev, State: zkwire.StateSyncConnected, Path: path}).Encode(e)
	}, true)
}

// finish closes the connection once what is queued is written.
func (c *conn) finish() {
	c.outMu.Lock()
	c.closing = true
	c.outMu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close drops the connection now.
func (c *conn) close() {
	c.outMu.Lock()
	c.dead = true
	c.outMu.Unlock()
	c.nc.Close()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) writeLoop() {
	for {
		c.outMu.Lock()
		batch := c.out
		c.out, c.pending = nil, 0
		closing, dead := c.closing, c.dead
		c.outMu.Unlock()
		if dead {
			return
		}
		if len(batch) > 0 {
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			bufs := net.Buffers(batch)
			if _, err := bufs.WriteTo(c.nc); err != nil {
				c.close()
				return
			}
			select {
			case c.drained <- struct{}{}:
			default:
			}
			continue
		}
		if closing {
			if tc, ok := c.nc.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			c.close()
			return
		}
		<-c.wake
	}
}

// serve runs the connection: an optional four-letter word, the
// handshake, then requests until the client goes, the session ends or the
// server closes.
func (c *conn) serve() {
	err := c.run()
	c.outMu.Lock()
	flushing := c.closing && !c.dead
	c.outMu.Unlock()
	if !flushing {
		c.close()
	} // else writeLoop closes it once the last reply is out
	c.s.connClosed(c, err)
}

func (c *conn) run() error {
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.MaxSessionTimeout))
	raw, err := zkwire.ReadLength(c.br)
	if err != nil {
		return err
	}
	if w := zkwire.FourLetterWord(raw); w != "" {
		c.fourLetterWord(w)
		return errFourLetter
	}
	body, err := zkwire.ReadBody(c.br, raw, zkwire.MaxPacket, nil)
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
		if !c.waitDrained() {
			return errServerClosed
		}
		c.nc.SetReadDeadline(time.Now().Add(timeout))
		raw, err := zkwire.ReadLength(c.br)
		if err == nil {
			c.buf, err = zkwire.ReadBody(c.br, raw, zkwire.MaxPacket, c.buf)
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
