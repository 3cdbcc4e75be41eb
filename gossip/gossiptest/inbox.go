package gossiptest

import (
	"container/heap"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// inboxLimit bounds the packets waiting for one node, like a socket's
// receive buffer: past it packets are dropped rather than memory grown
// without bound when a node stops reading.
const inboxLimit = 4096

// delivery is one packet copy waiting for its due time.
type delivery struct {
	due  time.Time
	seq  uint64 // breaks ties so equal delays keep send order
	from *Transport
	buf  []byte
}

// inbox holds a node's packets in flight, earliest due first.
type inbox struct {
	mu     sync.Mutex
	q      deliveryHeap
	seq    uint64
	closed bool
	wake   chan struct{} // cap 1: a new packet may be due sooner
}

func newInbox() inbox { return inbox{wake: make(chan struct{}, 1)} }

// enqueue puts a packet copy from a sender in flight to t.
func (t *Transport) enqueue(from *Transport, buf []byte, due time.Time) {
	in := &t.in
	in.mu.Lock()
	if in.closed || len(in.q) >= inboxLimit {
		in.mu.Unlock()
		from.stats.packetsDropped.Add(1)
		return
	}
	in.seq++
	heap.Push(&in.q, delivery{due: due, seq: in.seq, from: from, buf: buf})
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// next pops the earliest packet if it is due at now; otherwise it returns
// how long until one is, or 0 if none is in flight.
func (in *inbox) next(now time.Time) (d delivery, wait time.Duration, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.q) == 0 {
		return delivery{}, 0, false
	}
	if wait := in.q[0].due.Sub(now); wait > 0 {
		return delivery{}, wait, false
	}
	return heap.Pop(&in.q).(delivery), 0, true
}

// close refuses further packets and counts those in flight as dropped.
func (in *inbox) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
	for _, d := range in.q {
		d.from.stats.packetsDropped.Add(1)
	}
	in.q = nil
}

// deliverLoop is the transport's one goroutine: it hands each packet to
// memberlist when it is due, until Shutdown.
func (t *Transport) deliverLoop() {
	defer close(t.loopDone)
	defer t.in.close()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d, wait, ok := t.in.next(time.Now())
		if ok {
			if !t.deliver(d) {
				return
			}
			continue
		}
		// Since Go 1.23 Stop and Reset discard a pending tick, so the
		// timer never fires for a stale due time.
		timer.Stop()
		if wait > 0 {
			timer.Reset(wait)
		}
		select {
		case <-t.in.wake:
		case <-timer.C:
		case <-t.done:
			return
		}
	}
}

// deliver hands one packet to memberlist, unless its link was cut, or an
// end hung, while it was in flight. It returns false once the transport is shutting down.
func (t *Transport) deliver(d delivery) bool {
	if t.net.blocked(d.from.name, t.name) || t.net.hung(t.name) || t.net.hung(d.from.name) {
		d.from.stats.packetsDropped.Add(1)
		return true
	}
	p := &memberlist.Packet{Buf: d.buf, From: d.from.addr, Timestamp: time.Now()}
	select {
	case t.packetCh <- p:
		t.stats.packetsReceived.Add(1)
		t.stats.packetBytesReceived.Add(uint64(len(d.buf)))
		return true
	case <-t.done:
		d.from.stats.packetsDropped.Add(1)
		return false
	}
}

type deliveryHeap []delivery

func (h deliveryHeap) Len() int { return len(h) }
func (h deliveryHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h deliveryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *deliveryHeap) Push(x any)   { *h = append(*h, x.(delivery)) }
func (h *deliveryHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	old[len(old)-1] = delivery{} // release the buffer
	*h = old[:len(old)-1]
	return d
}
