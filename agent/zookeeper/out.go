package zookeeper

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// A connection's replies and notifications are queued as whole frames,
// in order, and written by whichever goroutine flushes: the connection's
// reader once it has answered every request already received (so a burst
// of pipelined requests is answered with one write), or, for
// notifications queued from elsewhere, a goroutine started for the
// purpose. At most one goroutine flushes a connection at a time, and it
// stops only when the queue is empty, so nothing queued is left behind.

// chunk is the size frames are batched in: small replies share pooled
// chunks; a listing of 1,000 provider URLs (~300 KB, encoded once per
// change of the children) is queued by reference, never copied.
const chunk = 16 << 10

// flushAt is how much a reader queues before it writes even though more
// requests wait: a pipeline of large replies streams instead of piling up.
const flushAt = 64 << 10

// sharedMin is the size from which a shared encoding is queued by
// reference rather than copied into a chunk.
const sharedMin = 4 << 10

var chunks = sync.Pool{New: func() any { b := make([]byte, 0, chunk); return &b }}

// room makes the open chunk one with size bytes free, taking a new one
// from the pool when needed; outMu held.
func (c *conn) room(size int) {
	if n := len(c.out); c.open && cap(c.out[n-1])-len(c.out[n-1]) >= size {
		return
	}
	p := chunks.Get().(*[]byte)
	c.owned = append(c.owned, p)
	c.out = append(c.out, (*p)[:0])
	c.open = true
}

// frame starts a frame of about size bytes in the open chunk, reserving
// its length prefix; outMu held. The caller appends its body to c.enc.B
// and calls endFrame.
func (c *conn) frame(size int) {
	c.room(4 + size)
	n := len(c.out)
	c.enc.B = append(c.out[n-1], 0, 0, 0, 0)
	c.start = len(c.enc.B)
}

// endFrame writes the length of the frame begun by frame, plus extra
// bytes queued by reference after it.
func (c *conn) endFrame(extra int) {
	n := len(c.out)
	b := c.enc.B
	binary.BigEndian.PutUint32(b[c.start-4:], uint32(len(b)-c.start+extra))
	c.pending += len(b) - len(c.out[n-1])
	c.out[n-1] = b
	c.enc.B = nil
}

// shared queues b, which must never change, by reference; outMu held.
func (c *conn) shared(b []byte) {
	c.out = append(c.out, b)
	c.open = false
	c.pending += len(b)
}

// accept reports whether frames may still be queued; outMu held.
func (c *conn) accept() bool { return !c.dead && !c.closing }

// overflowLocked closes a connection whose client stopped reading while
// notifications pile up (maxPending); outMu held, which it releases.
func (c *conn) overflowLocked() {
	c.dead = true
	c.dropQueueLocked()
	c.outMu.Unlock()
	c.s.log.Warn("client stopped reading its replies; closing its connection", "remote", c.remote, "queued_bytes", maxPending)
	c.nc.Close()
}

func (c *conn) dropQueueLocked() {
	for _, p := range c.owned {
		*p = (*p)[:0]
		chunks.Put(p)
	}
	clear(c.out)
	c.out, c.owned, c.pending, c.open = c.out[:0], c.owned[:0], 0, false
}

// kick makes sure what is queued gets written when the caller is not the
// connection's reader: it starts a flushing goroutine unless one runs.
// s.mu held (so Close, which sets s.closed under it, waits for it).
func (c *conn) kick() {
	c.outMu.Lock()
	if c.flushing || c.dead || len(c.out) == 0 && !c.closing || c.s.closed {
		c.outMu.Unlock()
		return
	}
	c.flushing = true
	c.outMu.Unlock()
	c.s.wg.Go(c.flushLoop)
}

// flush writes what is queued on the calling goroutine, unless another
// goroutine is flushing already (it will write this too).
func (c *conn) flush() {
	c.outMu.Lock()
	if c.flushing || c.dead {
		c.outMu.Unlock()
		return
	}
	c.flushing = true
	c.outMu.Unlock()
	c.flushLoop()
}

// flushLoop writes batches until the queue is empty; c.flushing is set.
// A connection that is closing is closed once its last frame is out.
func (c *conn) flushLoop() {
	c.outMu.Lock()
	for !c.dead {
		if len(c.out) == 0 {
			c.flushing = false
			if !c.closing {
				c.outMu.Unlock()
				return
			}
			c.dead = true
			c.outMu.Unlock()
			if tc, ok := c.nc.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			c.nc.Close()
			return
		}
		batch, owned := c.out, c.owned
		c.out, c.owned, c.pending, c.open = c.spareOut[:0], c.spareOwned[:0], 0, false
		c.outMu.Unlock()
		c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
		bufs := net.Buffers(batch)
		_, err := bufs.WriteTo(c.nc)
		for _, p := range owned {
			*p = (*p)[:0]
			chunks.Put(p)
		}
		clear(batch)
		clear(owned)
		select {
		case c.drained <- struct{}{}:
		default:
		}
		c.outMu.Lock()
		c.spareOut, c.spareOwned = batch[:0], owned[:0]
		if err != nil {
			c.flushing = false
			c.outMu.Unlock()
			c.close()
			return
		}
	}
	c.flushing = false
	c.outMu.Unlock()
}

// reply queues a reply header, with body when err is 0. s.mu held, so the
// zxid is current and the reply follows every notification already queued.
func (c *conn) reply(xid, err int32, body zkwire.Record) {
	c.replyShared(xid, err, nil, body)
}

// replyShared queues a reply whose body is pre (an encoding that never
// changes, such as a node's child list) followed by body. s.mu held.
func (c *conn) replyShared(xid, err int32, pre []byte, body zkwire.Record) {
	h := zkwire.ReplyHeader{Xid: xid, Zxid: c.s.zxid, Err: err}
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if !c.accept() {
		return
	}
	if err != 0 {
		pre, body = nil, nil
	}
	if len(pre) < sharedMin {
		c.frame(16 + len(pre))
		h.Encode(&c.enc)
		c.enc.B = append(c.enc.B, pre...)
		if body != nil {
			body.Encode(&c.enc)
		}
		c.endFrame(0)
		return
	}
	// The length prefix counts what follows the shared part: encode that
	// first, then queue header, shared part and tail in order.
	c.tail.B = c.tail.B[:0]
	if body != nil {
		body.Encode(&c.tail)
	}
	c.frame(16)
	h.Encode(&c.enc)
	c.endFrame(len(pre) + len(c.tail.B))
	c.shared(pre)
	if len(c.tail.B) > 0 {
		c.room(len(c.tail.B))
		n := len(c.out) - 1
		c.out[n] = append(c.out[n], c.tail.B...)
		c.pending += len(c.tail.B)
	}
}

// queue queues one frame built by body; a notification that finds
// maxPending queued closes the connection instead.
func (c *conn) queue(body func(*zkwire.Encoder), notification bool) {
	c.outMu.Lock()
	if !c.accept() {
		c.outMu.Unlock()
		return
	}
	c.frame(0)
	body(&c.enc)
	c.endFrame(0)
	if notification && c.pending > maxPending {
		c.overflowLocked()
		return
	}
	c.outMu.Unlock()
}

// notify queues a watch notification and has it written. s.mu held.
func (c *conn) notify(ev int32, path string, zxid int64) {
	c.s.stats.notifications.Add(1)
	c.outMu.Lock()
	if !c.accept() {
		c.outMu.Unlock()
		return
	}
	c.frame(24 + len(path))
	(&zkwire.ReplyHeader{Xid: zkwire.XidNotification, Zxid: zxid}).Encode(&c.enc)
	(&zkwire.WatcherEvent{Type: ev, State: zkwire.StateSyncConnected, Path: path}).Encode(&c.enc)
	c.endFrame(0)
	if c.pending > maxPending {
		c.overflowLocked()
		return
	}
	c.outMu.Unlock()
	c.kick()
}
