package gossip

import (
	"fmt"
	"testing"

	"github.com/namecast/namecast/routes"
)

// However fast changes come, the queue keeps at most MaxQueuedBroadcasts,
// and keeps the newest: the pruned ones are left to anti-entropy.
func TestQueueStaysBounded(t *testing.T) {
	g := newUnstarted(t, "me")
	limit := g.cfg.MaxQueuedBroadcasts
	var last routes.Delta
	for i := range 3 * limit {
		u := routes.URL{Interface: "I", Category: "providers", URL: fmt.Sprintf("dubbo://10.0.0.1:%d/I", i)}
		d, ok := g.table.ApplyLocal([]routes.Record{{URL: &u}}, nil)
		if !ok {
			t.Fatal("no change")
		}
		g.Publish(d)
		last = d
		if n := g.QueuedBroadcasts(); n > limit {
			t.Fatalf("%d broadcasts queued after %d changes, over the bound of %d", n, i+1, limit)
		}
	}
	newest := "me\x00" + last.Ops[0].Key
	found := false
	for _, b := range g.queue.GetBroadcasts(0, 1<<20) {
		if string(b) == string(encode(msgOps, routes.Delta{Origin: "me", Inc: last.Inc, Ops: last.Ops})) {
			found = true
		}
	}
	if !found {
		t.Errorf("the newest change (%q) was pruned", newest)
	}
}

// QueuedBroadcasts reads both queues as one: an enqueue that prunes the
// full queue to add to the light one never shows a reader the full queue
// before the prune and the light one after the add (limit + 1: agent's
// TestChurnStaysBounded once read 1025 over a bound of 1024).
func TestQueuedBroadcastsNeverReadsOverTheBound(t *testing.T) {
	g := newUnstarted(t, "me")
	limit := g.cfg.MaxQueuedBroadcasts
	for i := range limit {
		g.enqueue(g.queue, &broadcast{name: fmt.Sprint("full", i), msg: []byte("x")})
	}
	done := make(chan struct{})
	most := make(chan int, 1)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				most <- n
				return
			default:
				n = max(n, g.QueuedBroadcasts())
			}
		}
	}()
	// Each light add prunes one from the full queue (the light queue is
	// pruned first, so it is emptied every other round).
	for i := range 20000 {
		if i%2 == 0 && g.light.NumQueued() > 0 { // Prune panics on a queue never used
			g.light.Prune(0)
		}
		g.enqueue(g.light, &broadcast{name: fmt.Sprint("light", i), msg: []byte("x")})
		g.enqueue(g.queue, &broadcast{name: fmt.Sprint("full+", i), msg: []byte("x")})
	}
	close(done)
	if n := <-most; n > limit {
		t.Fatalf("QueuedBroadcasts read %d, over the bound of %d", n, limit)
	}
}
