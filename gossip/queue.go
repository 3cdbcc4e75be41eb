package gossip

// enqueue queues a broadcast within MaxQueuedBroadcasts, making room first
// with memberlist's Prune, which drops the broadcasts sent most often and,
// among equals, the oldest. Nothing is lost for good: a peer that misses a
// dropped op or notice finds its digest entry differs from ours and pulls
// the change by anti-entropy. Pruning before adding keeps the bound exact
// for readers too; queueMu keeps it exact when publishing and relaying
// goroutines enqueue at once.
func (g *Gossip) enqueue(b *broadcast) {
	g.queueMu.Lock()
	defer g.queueMu.Unlock()
	if n, limit := g.queue.NumQueued(), g.cfg.MaxQueuedBroadcasts; n >= limit {
		g.queue.Prune(limit - 1)
		g.m.IncrCounter([]string{"gossip", "queue", "pruned"}, float32(n-limit+1))
	}
	g.queue.QueueBroadcast(b)
}
