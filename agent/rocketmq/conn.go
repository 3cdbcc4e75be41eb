package rocketmq

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

const (
	// readBuffer holds ~140 pipelined route queries of the Go client.
	readBuffer = 16 << 10
	// flushAt bounds the responses batched before they are written even
	// though more requests are waiting.
	flushAt = 64 << 10
	// keepOut bounds the response buffer kept between batches; a rare huge
	// answer (a cluster table of thousands of brokers) is not worth holding.
	keepOut = 1 << 20
	// workQueue is how many state-changing requests may wait on one
	// connection before its reader stops reading (backpressure).
	workQueue = 64
)

// conn is one peer's connection: a reader goroutine that decodes frames and
// answers queries itself, and, started on the first state-changing request,
// a worker that runs those in arrival order.
type conn struct {
	s   *Server
	nc  net.Conn
	br  *bufio.Reader
	dec *remoting.Decoder

	wmu sync.Mutex // one writer at a time, so frames never interleave

	// Reader goroutine only.
	out  []byte // responses not yet written
	rep  reply
	work chan work // nil until the first state-changing request
	// inflight bounds the big frames this connection has read but not
	// yet run (inflight.go).
	inflight *budget
	done     chan struct{} // closed when the worker has finished
}

func newConn(s *Server, nc net.Conn) *conn {
	br := bufio.NewReaderSize(nc, readBuffer)
	return &conn{s: s, nc: nc, br: br, dec: remoting.NewDecoder(br, s.cfg.MaxFrame), inflight: newBudget(int64(s.cfg.MaxFrame))}
}

// serve runs the connection until the peer goes, it misbehaves or the
// server closes; then it unregisters the brokers that registered over it.
func (c *conn) serve() {
	err := c.readLoop()
	c.nc.Close()
	if c.work != nil {
		close(c.work)
		<-c.done // requests already read still run: a registration must not outlive its close
	}
	c.logEnd(err)
	if !c.s.closing.Load() {
		c.s.connClosed(c)
	}
	// Returning, last, makes the server's connection set forget c, so a
	// connection no longer listed is fully handled.
}

// Close drops the connection now (the server's Close); serve then ends.
func (c *conn) Close() error { return c.nc.Close() }

func (c *conn) readLoop() error {
	idle := c.s.cfg.IdleTimeout
	for {
		if c.wouldBlock() {
			// Nothing more to batch with: send what we have, then wait.
			if err := c.flushOut(); err != nil {
				return err
			}
			if err := c.nc.SetReadDeadline(time.Now().Add(idle)); err != nil {
				return err
			}
		}
		held, err := c.reserveNext()
		if err != nil {
			return err
		}
		req, err := c.dec.Decode()
		if err != nil {
			c.releaseFrame(held)
			return err
		}
		c.s.stats.count(req.Code)
		if req.IsResponse() {
			c.releaseFrame(held)
			continue // answers to requests we never send
		}
		h := lookup(req.Code)
		if h.mutates {
			c.enqueue(req, held)
			continue
		}
		c.rep.reset(req)
		c.s.run(h, c, req, &c.rep)
		c.releaseFrame(held)
		if req.IsOneway() {
			continue
		}
		if err := c.appendOut(&c.rep); err != nil {
			return err
		}
		if len(c.out) >= flushAt {
			if err := c.flushOut(); err != nil {
				return err
			}
		}
	}
}

// wouldBlock reports whether the next Decode would wait for the network,
// i.e. whether the buffer lacks a whole frame.
func (c *conn) wouldBlock() bool {
	n := c.br.Buffered()
	if n < 4 {
		return true
	}
	p, _ := c.br.Peek(4)
	return int64(n) < 4+int64(binary.BigEndian.Uint32(p))
}

func (c *conn) appendOut(rep *reply) error {
	out, err := remoting.AppendFrame(c.out, &rep.Command)
	if err != nil {
		// Only an impossible response (over 2 GiB) gets here; tell the peer.
		rep.fail(remoting.SystemError, "response too large: "+err.Error())
		rep.Body = nil
		out, err = remoting.AppendFrame(c.out, &rep.Command)
	}
	c.out = out
	return err
}

func (c *conn) flushOut() error {
	if len(c.out) == 0 {
		return nil
	}
	err := c.write(c.out)
	c.out = c.out[:0]
	if cap(c.out) > keepOut {
		c.out = nil
	}
	return err
}

// write sends whole frames under the write lock. A failed or timed-out
// write closes the connection: the peer cannot be resynchronised.
func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	_, err := c.nc.Write(b)
	if err != nil {
		c.nc.Close()
	}
	return err
}

// work is a state-changing request and the frame memory it holds.
type work struct {
	req  *remoting.Command
	held int64
}

// enqueue hands a state-changing request to the connection's worker.
func (c *conn) enqueue(req *remoting.Command, held int64) {
	if c.work == nil {
		c.work = make(chan work, workQueue)
		c.done = make(chan struct{})
		go c.workLoop() // waited for by serve, which the server waits for
	}
	if len(c.work) == cap(c.work) {
		c.flushOut() // we may block below: do not hold answers back meanwhile
	}
	c.work <- work{req, held}
}

func (c *conn) workLoop() {
	defer close(c.done)
	var rep reply
	var buf []byte
	for w := range c.work {
		req := w.req
		rep.reset(req)
		c.s.run(lookup(req.Code), c, req, &rep)
		c.releaseFrame(w.held)
		if req.IsOneway() {
			continue
		}
		var err error
		if buf, err = remoting.AppendFrame(buf[:0], &rep.Command); err == nil {
			c.write(buf)
		}
		if cap(buf) > keepOut {
			buf = nil
		}
	}
}

func (c *conn) logEnd(err error) {
	var tooLarge *remoting.FrameTooLargeError
	var malformed *remoting.FormatError
	peer := c.nc.RemoteAddr().String()
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), c.s.closing.Load():
		c.s.log.Debug("connection closed", "peer", peer)
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.s.log.Debug("closing idle connection", "peer", peer, "idle", c.s.cfg.IdleTimeout)
	case errors.As(err, &tooLarge):
		c.s.stats.frameErrors.Add(1)
		c.s.log.Warn("closing connection: frame over the size cap (raise the cap if a broker has very many topics)", "peer", peer, "err", err)
	case errors.As(err, &malformed), errors.Is(err, io.ErrUnexpectedEOF):
		c.s.stats.frameErrors.Add(1)
		c.s.log.Warn("closing connection: not a RocketMQ remoting frame", "peer", peer, "err", err)
	default:
		c.s.log.Debug("connection failed", "peer", peer, "err", err)
	}
}
