package rocketmq

import (
	"context"
	"encoding/binary"
	"sync"
)

// Frames a peer has announced but the door has not finished with cost
// memory the peer controls: 40 connections each sending most of a 15 MiB
// frame held 690 MB. So a frame bigger than smallFrame is read only once
// its whole announced size is reserved, first from its connection's
// budget (one MaxFrame: a connection's queued requests wait for the
// earlier ones), then from the server's (Config.InFlight, default four
// MaxFrames); it is released once the request has run. A connection
// waiting for room reads nothing meanwhile (the peer's writes block in
// TCP), so what all peers can make the door hold is bounded by InFlight
// plus smallFrame and the read buffer per connection.
const smallFrame = 64 << 10

// budget is a count of bytes that waits for room.
type budget struct {
	mu    sync.Mutex
	used  int64
	max   int64
	freed chan struct{} // closed and replaced on every release
}

func newBudget(max int64) *budget { return &budget{max: max, freed: make(chan struct{})} }

// acquire takes n bytes, waiting until they fit; false if ctx ended first.
func (b *budget) acquire(ctx context.Context, n int64) bool {
	for {
		b.mu.Lock()
		if b.used+n <= b.max || b.used == 0 {
			b.used += n
			b.mu.Unlock()
			return true
		}
		ch := b.freed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// inUse is what is reserved now.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// reserveNext reserves the memory of the next frame when it is a big one,
// returning what to release once the request has run (0: nothing). A
// frame over MaxFrame or a short read is left to Decode to report.
func (c *conn) reserveNext() (int64, error) {
	p, err := c.br.Peek(4)
	if err != nil {
		return 0, nil
	}
	n := 4 + int64(binary.BigEndian.Uint32(p))
	if n <= smallFrame || n > int64(c.s.cfg.MaxFrame) {
		return 0, nil
	}
	if !c.inflight.acquire(c.s.ctx, n) {
		return 0, context.Canceled
	}
	if !c.s.inflight.acquire(c.s.ctx, n) {
		c.inflight.release(n)
		return 0, context.Canceled
	}
	return n, nil
}

// releaseFrame returns a frame's reservation once its request has run.
func (c *conn) releaseFrame(n int64) {
	if n > 0 {
		c.s.inflight.release(n)
		c.inflight.release(n)
	}
}
