package gossip

import "time"

// A member may pull from one that has not heard of it yet: a restarted
// member pulls as soon as it has joined, and a joiner pulls the largest
// origins from themselves (compare) while its alive message is still
// spreading by gossip, a few hundred ms on lan. An answer to a member we
// know nothing of has nowhere to go; dropped, it would leave the joiner to
// wait out its pull's timeout (10 s) and pull again from a peer. So the
// answer waits for the member to become known, up to answerWait, with at
// most maxWaitingAnswers waiting at once so that pulls under made-up names
// cannot pile up goroutines.
const (
	answerWait        = 3 * time.Second
	maxWaitingAnswers = 16
)

const answerPoll = 20 * time.Millisecond

// answerPull answers a pull, at once if we know where its sender is, else
// once we learn it (see above).
func (g *Gossip) answerPull(p pull) {
	if g.answerNode(p.From) != nil {
		g.sendSnapshots(p)
		return
	}
	if g.waitingAnswers.Add(1) > maxWaitingAnswers {
		g.waitingAnswers.Add(-1)
		g.m.IncrCounter([]string{"antientropy", "pulls", "unknown_sender"}, 1)
		return
	}
	// The worker runs this, so the group is not empty: Add cannot race
	// Shutdown's Wait.
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer g.waitingAnswers.Add(-1)
		if g.awaitMember(p.From, answerWait) {
			g.submit(func() { g.sendSnapshots(p) })
		} else {
			g.m.IncrCounter([]string{"antientropy", "pulls", "unknown_sender"}, 1)
		}
	}()
}

// awaitMember waits until name is a member we can answer, up to limit.
func (g *Gossip) awaitMember(name string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	t := time.NewTicker(answerPoll)
	defer t.Stop()
	for g.answerNode(name) == nil {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-g.stop:
			return false
		case <-t.C:
		}
	}
	return true
}
