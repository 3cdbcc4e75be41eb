package gossip

import (
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// pendingPull is a gap we saw: origin is behind (or diverged from) target
// as held by source. It is pulled at due unless gossip closes it first.
// Once pulled it stays, marked sent, until the snapshot is merged or
// pullTimeout passes: while it is in flight, later digests showing the same
// gap schedule nothing. Without that, every anti-entropy round that saw the
// gap again (once a second from each peer) pulled the origin again before
// the first answer arrived; with large tables under CPU load the answers
// took longer than a round, the pulls piled up, each costing the sender a
// whole snapshot to encode and us one to decode, and a joiner never caught
// up.
type pendingPull struct {
	source string
	target routes.DigestEntry
	due    time.Time
	sent   time.Time // zero until pulled
}

// pullTimeout is how long a pull may stay unanswered before the gap can be
// pulled again: a source that died or no longer holds the origin sends
// nothing back. Each part of the answer that arrives restarts it.
const pullTimeout = 10 * time.Second

func (p pendingPull) inFlight(now time.Time) bool {
	return !p.sent.IsZero() && now.Sub(p.sent) < pullTimeout
}

// liveDigest is our digest restricted to origins we consider alive, which
// is all we ever serve or compare, without our own while withheld
// (withhold.go).
//
// Origins we are pulling are left out too. A large snapshot comes in
// parts, and a replica that merged some has the snapshot's seq but only
// part of its records: its entry looks diverged to a peer that holds the
// origin whole, which pulls the origin's own snapshot to settle it. A
// joiner's partial table made every peer it exchanged digests with pull
// every origin it was still receiving, from the origins, during the join.
func (g *Gossip) liveDigest() routes.Digest {
	d := g.table.Digest()
	for o := range g.table.RefusedOrigins() {
		delete(d, o) // routes' receive.go: its entry would differ from the origin's to every peer
	}
	now := time.Now()
	if g.withheld.Load() {
		delete(d, g.name)
	}
	g.mu.Lock()
	for o := range d {
		if o != g.name && (!g.aliveLocked(o) || g.pending[o].inFlight(now)) {
			delete(d, o)
		}
	}
	g.mu.Unlock()
	return d
}

// liveSummary computes our summary and refreshes the copy acks carry.
func (g *Gossip) liveSummary() uint64 {
	sum := g.liveDigest().Summary()
	g.ackSummary.Store(sum)
	return sum
}

// compare notes every origin where a peer's digest shows we lack something.
// With now (a join's digest), every origin we are behind on is pulled at
// once from the peer we joined through: the one member that surely knows
// us. Another member answers a pull only once our alive message reached it
// by gossip (answer.go), which can take hundreds of milliseconds after a
// join; and a part is encoded straight from the table, far faster than a
// joiner decodes and merges it, so one sender keeps ahead of the joiner.
func (g *Gossip) compare(from string, theirs routes.Digest, now bool) {
	mine := g.table.Digest()
	refused := g.table.RefusedOrigins()
	var behind, unknown []string
	defer func() { g.noteUnknown(from, unknown) }()
	for origin, e := range theirs {
		if origin == g.name {
			g.noteOwnIncarnation(e.Inc)
			continue
		}
		if !g.alive(origin) {
			if !g.known(origin) {
				unknown = append(unknown, origin)
			}
			continue
		}
		if r, ok := refused[origin]; ok && r.Covers(e) {
			continue // past the budget at that point already: no pull changes it
		}
		have, ok := mine[origin]
		switch {
		case origin == routes.RulesOrigin:
			// Rules merge last-writer-wins from any replica: any
			// difference is worth a pull from this peer.
			if have != e {
				g.schedulePull(origin, from, e, now)
			}
		case (!ok && e.Seq > 0) || (ok && have.Behind(e)):
			if now {
				behind = append(behind, origin)
				continue
			}
			g.schedulePull(origin, from, e, now)
		case ok && have.Diverged(e):
			// Only the origin's own snapshot can say who is right.
			g.schedulePull(origin, origin, e, now)
		}
	}
	if !now {
		return
	}
	for _, origin := range behind {
		g.schedulePull(origin, from, theirs[origin], now)
	}
	g.kickPulls()
}

// schedulePull notes a gap; it reports whether the gap is news, i.e. no
// pull for as much was already pending.
func (g *Gossip) schedulePull(origin, source string, target routes.DigestEntry, now bool) bool {
	t := time.Now()
	due := t
	if !now {
		due = due.Add(g.cfg.PullGrace)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[origin]
	news := !ok || p.target.Behind(target)
	if ok && p.inFlight(t) {
		// The answer to our pull comes first; pulled checks it against
		// the newest target seen meanwhile.
		if news {
			p.target = target
			g.pending[origin] = p
		}
		return news
	}
	if ok && !news && p.due.Before(due) {
		return false // already waiting for this much or more, sooner
	}
	g.pending[origin] = pendingPull{source: source, target: target, due: due}
	// The loop sleeps until pullAt. A new gap due now is kicked by the
	// caller once its batch is scheduled; one already pending, moved to
	// now by a notice, is not news to the caller and is kicked here.
	if (!now || !news) && (g.pullAt.IsZero() || due.Before(g.pullAt)) {
		g.kickPulls()
	}
	return news
}

// kickPulls wakes the pull loop to look at the pending gaps again: one is
// due now, or due sooner than the loop's timer. Callers scheduling a batch
// due now kick once after it, so the batch goes as one pull per source.
func (g *Gossip) kickPulls() {
	select {
	case g.pullNow <- struct{}{}:
	default:
	}
}

// pullLoop sends, per source, one pull for every due gap still open. It
// sleeps until the next gap is due, not on a tick: an idle agent has no
// gaps, and a timer firing 8 times a second would wake it for nothing.
func (g *Gossip) pullLoop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-timer.C:
		case <-g.pullNow:
		}
		now := time.Now()
		if next := g.pullDue(now); next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(next.Sub(now))
		}
	}
}

// pullBatch is how far ahead of its due a gap is pulled with another
// that is due: gaps seen a moment apart (one digest's, then the next
// peer's) still go as one pull per source.
func (g *Gossip) pullBatch() time.Duration { return g.cfg.PullGrace / 4 }

// pullDue sends the pulls due by now (or within pullBatch of it) and
// returns when the pending gaps next need a look: the earliest due, or
// the end of a pull's timeout; zero when none is pending.
func (g *Gossip) pullDue(now time.Time) time.Time {
	horizon := now.Add(g.pullBatch())
	g.mu.Lock()
	next, due := g.nextPullLocked(now, horizon)
	g.pullAt = next
	g.mu.Unlock()
	if !due {
		return next // the common case, without copying the digest
	}
	mine := g.table.Digest()
	bySource := map[string][]string{}
	next = time.Time{}
	g.mu.Lock()
	for origin, p := range g.pending {
		if p.inFlight(now) {
			next = earliest(next, p.sent.Add(pullTimeout))
			continue
		}
		if p.due.After(horizon) {
			next = earliest(next, p.due)
			continue
		}
		have, ok := mine[origin]
		if ok && (have == p.target || (origin != routes.RulesOrigin && !have.Behind(p.target) && !have.Diverged(p.target))) {
			delete(g.pending, origin)
			continue // gossip closed the gap in the meantime
		}
		if !p.sent.IsZero() {
			delete(g.pending, origin) // timed out: the next digest schedules it anew
			continue
		}
		p.sent = now
		g.pending[origin] = p
		next = earliest(next, now.Add(pullTimeout))
		bySource[p.source] = append(bySource[p.source], origin)
	}
	g.pullAt = next
	g.mu.Unlock()
	for source, origins := range bySource {
		g.m.IncrCounter([]string{"antientropy", "pulls"}, float32(len(origins)))
		g.sendReliable(source, encode(msgPull, pull{From: g.name, Origins: origins, Bin: routes.BinaryVersion, Deflate: true}))
	}
	return next
}

// nextPullLocked reports whether a pending gap is due by horizon (or its
// pull timed out by now), and otherwise when the first one will be.
func (g *Gossip) nextPullLocked(now, horizon time.Time) (next time.Time, due bool) {
	for _, p := range g.pending {
		at := p.due
		if !p.sent.IsZero() {
			at = p.sent.Add(pullTimeout)
			if !at.After(now) {
				return time.Time{}, true
			}
		} else if !at.After(horizon) {
			return time.Time{}, true
		}
		next = earliest(next, at)
	}
	return next, false
}

// earliest is the earlier of two times, a zero time counting as none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func (g *Gossip) antiEntropyLoop() {
	tick := time.NewTicker(g.cfg.AntiEntropyInterval)
	defer tick.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-tick.C:
			g.sweep()
			g.reannounce(time.Now())
			g.liveSummary() // keeps the summary acks carry at most a tick old
			// Probe acks carry summaries; a separate one goes only when
			// none came lately (probing paused, or older peers).
			if time.Since(time.Unix(0, g.ackSummaryAt.Load())) < 2*g.cfg.AntiEntropyInterval {
				continue
			}
			if n := g.randomPeer(); n != nil {
				g.sendSummary(n.Name)
			}
		}
	}
}

// noteSummary compares a peer's summary, from a probe ack or a periodic
// push/pull, with ours; if they differ the two exchange digests, as for a
// summary packet.
//
// It runs on memberlist's probe goroutine, so the comparison with our own
// summary, which reads the table, happens on the worker.
func (g *Gossip) noteSummary(from string, sum uint64) {
	g.ackSummaryAt.Store(time.Now().UnixNano())
	if from == g.name || sum == g.ackSummary.Load() {
		return
	}
	g.submit(func() {
		if sum != g.liveSummary() {
			g.m.IncrCounter([]string{"antientropy", "summaries", "differ"}, 1)
			g.sendDigest(from, true)
		}
	})
}

func (g *Gossip) sendSummary(to string) {
	if n, ml := g.node(to), g.ml.Load(); n != nil && ml != nil {
		if err := ml.SendBestEffort(n, encode(msgSummary, summary{From: g.name, Sum: g.liveSummary()})); err == nil {
			g.m.IncrCounter([]string{"antientropy", "summaries"}, 1)
		}
	}
}

func (g *Gossip) sendDigest(to string, reply bool) {
	g.m.IncrCounter([]string{"antientropy", "digests"}, 1)
	g.sendReliable(to, encode(msgDigest, digestMsg{From: g.name, Digest: g.liveDigest(), Reply: reply}))
}

func (g *Gossip) mergeSnapshots(s snapshots) {
	for _, snap := range s.Snaps {
		// A snapshot claiming to be authoritative must come from its origin.
		snap.Authoritative = snap.Authoritative && snap.Origin == s.From
		if snap.Origin == g.name || !g.alive(snap.Origin) {
			continue
		}
		if g.afterAliveCheck != nil {
			g.afterAliveCheck(snap.Origin)
		}
		res := g.table.Merge(snap)
		g.count(res)
		g.noteRefused(snap.Origin, res)
		g.m.IncrCounter([]string{"antientropy", "snapshots", "merged"}, 1)
		// A split snapshot's parts are sent in key order: its last part
		// (open above) answers the pull, not its first.
		if snap.Hi == "" {
			g.pulled(snap.Origin)
		} else {
			g.progressed(snap.Origin)
		}
	}
}

// progressed restarts the timeout of a pull whose answer is arriving: a
// large origin's parts can take longer than pullTimeout in all on a
// loaded host, and pulling it again while they still flow doubled the
// work of both sides (the 500 × 1000 table never converged).
func (g *Gossip) progressed(origin string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p, ok := g.pending[origin]; ok && !p.sent.IsZero() {
		p.sent = time.Now()
		g.pending[origin] = p
	}
}

// pulled ends the pull in flight for origin, if any: an answer came. If a
// newer target was seen while it was in flight and the answer fell short
// of it, the gap is pulled again at once.
func (g *Gossip) pulled(origin string) {
	have, _ := g.table.Entry(origin)
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[origin]
	if !ok || p.sent.IsZero() {
		return
	}
	if have.Behind(p.target) {
		p.sent, p.due = time.Time{}, time.Now()
		g.pending[origin] = p
		g.kickPulls()
		return
	}
	delete(g.pending, origin)
}

func (g *Gossip) sendReliable(to string, msg []byte) { g.sendTo(g.node(to), msg) }

// sendAnswer answers a member that asked us for something, even one we do
// not hold as alive yet: a restarted member pulls as soon as it has joined,
// often before its refutation of its old death reaches us, and it would
// otherwise wait out its pull's timeout (10 s) for an answer that never
// left.
func (g *Gossip) sendAnswer(to string, msg []byte) { g.sendTo(g.answerNode(to), msg) }

// answerNode is where an answer to a member goes, nil if we have never
// heard of it.
func (g *Gossip) answerNode(to string) *memberlist.Node {
	n := g.node(to)
	if n == nil {
		g.mu.Lock()
		if m := g.members[to]; m != nil {
			n = nodeAt(to, m.addr)
		}
		g.mu.Unlock()
	}
	return n
}

func (g *Gossip) sendTo(n *memberlist.Node, msg []byte) {
	if n == nil {
		return
	}
	to := n.Name
	if g.sentReliable != nil {
		g.sentReliable(msg)
	}
	ml := g.ml.Load()
	if ml == nil {
		return // not started (tests drive an unstarted Gossip's delegates)
	}
	if err := ml.SendReliable(n, msg); err != nil {
		g.log.Debug("reliable send failed", "to", to, "err", err)
	}
}

// PendingPulls counts the origins we know we lack and have not pulled yet.
func (g *Gossip) PendingPulls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}
