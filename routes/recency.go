package routes

import (
	"sync/atomic"
	"unique"
)

// Recency: which of several agents' registrations of the same thing is
// served. A broker registers with every agent in its namesrvAddr, moves
// from one host's agent to another's, and an agent's registration outlives
// the broker's move until its lease ends; so several agents may hold a
// record of one broker id. Every agent must serve the same one, and the
// newest: a Lamport stamp orders them (Claim.Wins), never a wall clock.
//
//  1. Each table keeps a Lamport clock. A local broker put without a stamp
//     (Broker.Stamp 0) is stamped by ApplyLocal: with the clock's next
//     tick when its content changed, or when another agent's record of the
//     same id with other content is served over it (the broker came back
//     to this agent: a registration here now is the newest); else it keeps
//     its stamp, so the 30 s re-registrations cost nothing. A put with a
//     stamp (a record restored from the data dir) keeps it.
//  2. Every stamp a table sees, local or from a peer, moves its clock past
//     it, so a registration made after its agent saw another one is
//     stamped later than it, whatever the hosts' clocks say.
//  3. Views serve, per broker id, the record with the higher stateVersion
//     (5.x controller mode: the broker's own order), then the later stamp,
//     then the lower origin name: registrations that never saw each other
//     are truly concurrent, and every agent breaks the tie alike.

// lamportClock is Lamport's logical clock, safe for concurrent use.
type lamportClock struct{ t atomic.Uint64 }

// tick returns a time later than every time issued or witnessed.
func (c *lamportClock) tick() uint64 { return c.t.Add(1) }

// witness moves the clock to seen if it is behind.
func (c *lamportClock) witness(seen uint64) {
	for {
		cur := c.t.Load()
		if seen <= cur || c.t.CompareAndSwap(cur, seen) {
			return
		}
	}
}

// Stamp returns the next Lamport time, for a record whose content changes
// (the Stamp of Broker, URL and Znode records): later than every stamp
// this table has issued or seen, so "the latest registration" is ordered
// alike on every agent. ApplyLocal stamps broker records itself; doors
// stamp URL and znode records with this and order them with Claim.Wins.
func (t *Table) Stamp() uint64 { return t.stamps.tick() }

// Claim is one agent's registration of something other agents may
// register too (a broker id, an ephemeral znode): its Lamport stamp (from
// Table.Stamp, or Broker.Stamp) and the agent that holds it.
type Claim struct {
	Stamp  uint64
	Origin string
}

// Wins reports whether c is served over o: the later stamp, then the lower
// origin name. Every agent holding both orders them alike, and a claim
// stamped after its agent saw the other (a table witnesses every stamp it
// holds) wins over it, whatever the hosts' clocks say. Ties in both
// (one origin's two records) are the caller's to break by content.
func (c Claim) Wins(o Claim) bool {
	if c.Stamp != o.Stamp {
		return c.Stamp > o.Stamp
	}
	return c.Origin < o.Origin
}

// brokerBefore orders two records of one broker id: the higher
// stateVersion, then the newer claim, then (one origin's retired and
// current records) by content.
func brokerBefore(b *Broker, origin string, ob *Broker, oorigin string) bool {
	if b.StateVersion != ob.StateVersion {
		return b.StateVersion > ob.StateVersion
	}
	if c, oc := (Claim{b.Stamp, origin}), (Claim{ob.Stamp, oorigin}); c != oc {
		return c.Wins(oc)
	}
	if b.Addr != ob.Addr {
		return b.Addr < ob.Addr
	}
	return b.Cluster < ob.Cluster
}

// stampLocal sets the stamp of a local broker put that has none (step 1
// above); ApplyLocal witnesses one that has. t.mu must be held.
func (t *Table) stampLocal(st *originState, key string, b *Broker) {
	if b.Stamp != 0 {
		return
	}
	if e, ok := st.live.get(key); ok {
		old := e.clone().Broker
		if old != nil && old.Stamp != 0 {
			b.Stamp = old.Stamp
			if *old == *b && !t.servedOver(old) {
				return
			}
		}
	}
	b.Stamp = t.stamps.tick()
}

// servedOver reports whether another agent's record of local broker b's id,
// with other content, is served over b. t.mu must be held.
func (t *Table) servedOver(b *Broker) bool {
	for ob, origin := range t.views.brokers[b.Name] {
		if origin == t.local || ob.ID != b.ID {
			continue
		}
		same := *ob
		same.Stamp = b.Stamp
		if same != *b && brokerBefore(ob, origin, b, t.local) {
			return true
		}
	}
	return false
}

// Queue data is stamped too, so that the later write is served (Java's
// table keeps the last one; queuerec.go's outranks). A door writes a
// broker's queue data when Java would (a first registration, a
// DataVersion that differs from the address's last, an HTTP
// registration); ApplyLocal, or StampQueues before a lease is written,
// stamps each queue put that is not a copy and has no stamp: with the
// stamp of the record it replaces when the data is the same and no other
// agent's other data is served over it, else with the clock's next tick,
// one for the whole call (a registration's topics share it, so their
// interned numbers stay shared). A copy keeps its original's stamp.

// StampQueues stamps, in place, the queue puts among recs that need a
// stamp (see above), as ApplyLocal would if they were applied now: a door
// calls it before it writes the records' lease, so that the lease holds
// the stamps the table will.
func (t *Table) StampQueues(recs []Record) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var tick uint64
	for _, r := range recs {
		if r.Queue != nil {
			t.stampQueueLocked(r.Queue, &tick)
		}
	}
}

// stampQueueLocked stamps q if it needs one, taking a tick into *tick
// the first time a new stamp is needed. t.mu must be held (read is
// enough).
func (t *Table) stampQueueLocked(q *Queue, tick *uint64) {
	if q.Stamp != 0 || q.Copy {
		return
	}
	key := QueueKey(q.BrokerName, q.Topic)
	if e, ok := t.origins[t.local].live.get(key); ok {
		if old, isQueue := e.rec.p.(unique.Handle[queueVals]); isQueue {
			if v := old.Value(); v.Stamp != 0 && !v.Copy && v.sameContent(valsOf(q)) && !t.queueServedOver(e, v) {
				q.Stamp = v.Stamp
				return
			}
		}
	}
	if *tick == 0 {
		*tick = t.stamps.tick()
	}
	q.Stamp = *tick
}

// queueServedOver reports whether another agent's queue data of local
// record e's (broker name, topic), with other content, is served over
// it. Only agents that hold a member of the group hold its queue data (an
// original or a copy), so only theirs are looked at: a registration's
// every topic costs a lookup per such agent, not a scan of the topic's
// records on every broker. t.mu must be held.
func (t *Table) queueServedOver(e *entry, v queueVals) bool {
	for _, origin := range t.views.brokers[e.brokerName()] {
		if origin == t.local {
			continue
		}
		st := t.origins[origin]
		if st == nil {
			continue
		}
		if o, ok := st.live.get(e.key); ok && o.before(e) && !o.vals().Value().sameContent(v) {
			return true
		}
	}
	return false
}
