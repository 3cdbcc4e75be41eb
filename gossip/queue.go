package gossip

import "github.com/hashicorp/memberlist"

// enqueue queues a broadcast within MaxQueuedBroadcasts, making room first
// with memberlist's Prune, which drops the broadcasts sent most often and,
// among equals, the oldest. Nothing is lost for good: a peer that misses a
// dropped op or notice finds its digest entry differs from ours and pulls
// the change by anti-entropy. Pruning before adding keeps the bound exact
// for readers too; queueMu keeps it exact when publishing and relaying
// goroutines enqueue at once.
// The bound is on both queues together (direct.go); the light queue's
// relays, the least needed, are pruned first.
func (g *Gossip) enqueue(q *memberlist.TransmitLimitedQueue, b *broadcast) {
	g.queueMu.Lock()
	defer g.queueMu.Unlock()
	if n, limit := g.queue.NumQueued()+g.light.NumQueued(), g.cfg.MaxQueuedBroadcasts; n >= limit {
		over := n - limit + 1
		light := g.light.NumQueued()
		if light > 0 { // Prune panics on a queue never used
			g.light.Prune(max(0, light-over))
		}
		if over > light {
			g.queue.Prune(g.queue.NumQueued() - (over - light))
		}
		g.m.IncrCounter([]string{"gossip", "queue", "pruned"}, float32(over))
	}
	q.QueueBroadcast(b)
}
