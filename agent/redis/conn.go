package redis

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/redis/resp"
)

// conn is one client connection: its reader, its queue of frames to
// write (replies and published messages, in order) and its state.
type conn struct {
	s      *Server
	nc     net.Conn
	rd     *resp.Reader
	out    chan []byte // frames to write; a nil frame: flush and stop
	done   chan struct{}
	wrote  chan struct{} // closed when the writer stopped
	once   sync.Once
	opened time.Time

	// What follows is the serving goroutine's own.
	authed bool
	name   string
	ready  bool // the agent was ready, or ReadyWait passed, at a read
	quit   bool
	buf    []byte

	// subs and psubs are the channels and patterns subscribed to, under
	// s.pubsub.mu.
	subs, psubs map[string]struct{}
}

func (s *Server) open(nc net.Conn) *conn {
	return &conn{s: s, nc: nc, rd: resp.NewReader(nc, s.cfg.Limits), out: make(chan []byte, s.cfg.OutQueue),
		done: make(chan struct{}), wrote: make(chan struct{}), opened: time.Now(), authed: s.cfg.Password == ""}
}

// Close ends the connection (conns.Set closes it so at the door's Close).
func (c *conn) Close() error {
	c.kill()
	return nil
}

func (c *conn) kill() {
	c.once.Do(func() {
		close(c.done)
		c.nc.Close()
	})
}

// serveConn reads and answers commands until the client quits or goes, or
// the door closes.
func (s *Server) serveConn(c *conn) {
	s.counts.conns.Add(1)
	defer s.counts.conns.Add(-1)
	go c.writeLoop()
	refused := false
	defer func() {
		s.unsubscribeAll(c)
		select {
		case c.out <- nil:
		case <-c.done:
		}
		<-c.wrote
		if refused {
			c.drain()
		}
		c.kill()
	}()
	for !c.quit {
		args, err := c.rd.ReadCommand()
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				s.counts.protocolErrors.Add(1)
				c.send(resp.Err(nil, pe.Error()))
				refused = true
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("Redis connection ended", "remote", c.nc.RemoteAddr(), "err", err)
			}
			return
		}
		c.buf = s.dispatch(c, args, c.buf[:0])
		if len(c.buf) == 0 {
			continue // every command answers; a nil frame would stop the writer
		}
		if !c.send(append([]byte(nil), c.buf...)) {
			return
		}
	}
}

// drain ends a connection refused for a request it could not read so
// that its client reads the error: it closes the sending side, then reads
// and drops what the client still sends (at most 1 MiB, for 1 s), since
// closing with unread bytes would reset the connection and could discard
// the error before the client read it.
func (c *conn) drain() {
	tc, ok := c.nc.(interface{ CloseWrite() error })
	if !ok {
		return
	}
	tc.CloseWrite()
	c.nc.SetReadDeadline(time.Now().Add(time.Second))
	io.CopyN(io.Discard, c.nc, 1<<20)
}

// send queues a reply frame, waiting while the queue is full; false once
// the connection ended.
func (c *conn) send(frame []byte) bool {
	select {
	case c.out <- frame:
		return true
	case <-c.done:
		return false
	}
}

// push queues a published message without waiting: a subscriber whose
// queue is full is disconnected (it re-reads the registry when it
// reconnects, as Dubbo does).
func (c *conn) push(frame []byte) bool {
	select {
	case c.out <- frame:
		return true
	case <-c.done:
		return false
	default:
		c.s.counts.slowSubscribers.Add(1)
		c.s.log.Warn("Redis subscriber disconnected: it fell behind by more than the queue bound", "remote", c.nc.RemoteAddr(), "queue", c.s.cfg.OutQueue)
		c.kill()
		return false
	}
}

// writeLoop writes queued frames, flushing when the queue is empty, until
// a nil frame or the connection ends.
func (c *conn) writeLoop() {
	defer close(c.wrote)
	w := bufio.NewWriterSize(c.nc, 16<<10)
	for {
		var frame []byte
		select {
		case frame = <-c.out:
		case <-c.done:
			return
		}
		if frame == nil {
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			w.Flush()
			return
		}
		if _, err := w.Write(frame); err != nil {
			c.kill()
			return
		}
		if len(c.out) == 0 {
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
			if err := w.Flush(); err != nil {
				c.kill()
				return
			}
		}
	}
}

// awaitReady waits, before a connection's first read of the registry, for
// the agent's first sync with its cluster (at most ReadyWait from the
// connection's start), so an empty answer means none rather than not
// learned yet.
func (c *conn) awaitReady() {
	if c.ready {
		return
	}
	deadline := c.opened.Add(c.s.cfg.ReadyWait)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !c.s.host.Ready() && time.Now().Before(deadline) {
		select {
		case <-t.C:
		case <-c.done:
			return
		}
	}
	c.ready = true
}
