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
