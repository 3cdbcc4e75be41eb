package gossip

import (
	"github.com/namecast/namecast/routes"
)

// delegate is Gossip's memberlist.Delegate.
type delegate Gossip

func (d *delegate) NodeMeta(limit int) []byte { return *d.meta.Load() }

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	out := d.queue.GetBroadcasts(overhead, limit)
	for _, b := range out {
		limit -= overhead + len(b)
	}
	return append(out, d.light.GetBroadcasts(overhead, limit)...)
}

// LocalState is our digest on a join, so a joiner learns at once what to
// pull, and only our summary on the periodic push/pull: the full digest,
// ~50 bytes per origin each way, grew memberlist's idle push/pull traffic
// by as much as its own state, for nothing when the tables agree, and a
// differing summary leads to the same digest exchange anyway.
func (d *delegate) LocalState(join bool) []byte {
	g := (*Gossip)(d)
	if g.beforeLocalState != nil {
		g.beforeLocalState(join)
	}
	if !join {
		return encode(msgSummary, summary{From: g.name, Sum: g.liveSummary()})
	}
	return encode(msgDigest, digestMsg{From: g.name, Digest: g.liveDigest()})
}

func (d *delegate) MergeRemoteState(buf []byte, join bool) {
	g := (*Gossip)(d)
	if len(buf) > 0 && buf[0] == msgSummary {
		var s summary
		if decode(buf, &s) != nil {
			g.malformed("push/pull summary")
			return
		}
		g.noteSummary(s.From, s.Sum)
		return
	}
	var msg digestMsg
	if len(buf) == 0 || buf[0] != msgDigest || decode(buf, &msg) != nil {
		g.malformed("push/pull state")
		return
	}
	g.compare(msg.From, msg.Digest, join)
}

// NotifyMsg handles our user messages. UDP ones arrive on memberlist's
// packet goroutine, so only cheap work happens inline.
func (d *delegate) NotifyMsg(buf []byte) {
	g := (*Gossip)(d)
	if len(buf) == 0 {
		g.malformed("empty")
		return
	}
	switch buf[0] {
	case msgOps:
		var delta routes.Delta
		if decode(buf, &delta) != nil {
			g.malformed("ops")
			return
		}
		g.applyDelta(delta, false)
	case msgDirect:
		var delta routes.Delta
		if decode(buf, &delta) != nil {
			g.malformed("direct ops")
			return
		}
		g.applyDelta(delta, true)
	case msgNotice:
		var n notice
		if decode(buf, &n) != nil {
			g.malformed("notice")
			return
		}
		g.handleNotice(n, buf)
	case msgSummary:
		var s summary
		if decode(buf, &s) != nil {
			g.malformed("summary")
			return
		}
		if s.Sum != g.liveSummary() {
			g.submit(func() { g.sendDigest(s.From, true) })
		}
	case msgDigest:
		var msg digestMsg
		if decode(buf, &msg) != nil {
			g.malformed("digest")
			return
		}
		g.compare(msg.From, msg.Digest, false)
		if msg.Reply {
			g.submit(func() { g.sendDigest(msg.From, false) })
		}
	case msgPull:
		var p pull
		if decode(buf, &p) != nil {
			g.malformed("pull")
			return
		}
		g.submit(func() { g.answerPull(p) })
	case msgSnapshots:
		var s snapshots
		if decode(buf, &s) != nil {
			g.malformed("snapshots")
			return
		}
		g.mergeSnapshots(s)
	case msgParts:
		g.handleParts(buf)
	case msgPartsDeflated:
		g.handleDeflatedParts(buf)
	case msgLeaving:
		var l leaving
		if decode(buf, &l) != nil {
			g.malformed("leaving")
			return
		}
		g.markLeft(l.Name, l.Inc)
	case msgQuery:
		var q queryMsg
		if decode(buf, &q) != nil {
			g.malformed("query")
			return
		}
		g.handleQuery(q)
	case msgAnswer:
		var a answerMsg
		if decode(buf, &a) != nil {
			g.malformed("answer")
			return
		}
		g.handleAnswer(a)
	default:
		g.malformed("unknown type")
	}
}

// handleNotice pulls an announced change we lack, from its origin or, for
// rules, from the agent that announced it: nobody answers for the rules'
// pseudo-origin. The notice is relayed once, when it is news to us, as ops
// are: only the announcer's own queue would carry it otherwise.
func (g *Gossip) handleNotice(n notice, buf []byte) {
	source := n.Origin
	if n.Origin == routes.RulesOrigin {
		source = n.From
	}
	if n.Origin == g.name {
		g.noteOwnIncarnation(n.Entry.Inc)
		return
	}
	if source == g.name || source == "" || !g.alive(n.Origin) || !g.alive(source) {
		return
	}
	if mine, ok := g.table.Entry(n.Origin); (!ok || mine.Behind(n.Entry)) && g.schedulePull(n.Origin, source, n.Entry, true) {
		g.kickPulls()
		g.enqueue(g.queue, &broadcast{name: n.Origin + "\x00notice", msg: append([]byte(nil), buf...)})
	}
}

// applyDelta applies ops gossiped to us, or sent direct by their origin
// (direct.go), and relays those that were news.
func (g *Gossip) applyDelta(d routes.Delta, direct bool) {
	if d.Origin == g.name {
		g.noteOwnIncarnation(d.Inc) // relayed back to us, or a past run's
		return
	}
	if !g.alive(d.Origin) {
		g.m.IncrCounter([]string{"gossip", "ops", "not_alive"}, float32(len(d.Ops)))
		return
	}
	// The member may die right here: the table's drop floor then refuses
	// the ops, under the same lock as the drop.
	if g.afterAliveCheck != nil {
		g.afterAliveCheck(d.Origin)
	}
	// One op at a time, so only the ops that were news to us are relayed.
	for _, op := range d.Ops {
		one := routes.Delta{Origin: d.Origin, Inc: d.Inc, Ops: []routes.Op{op}}
		res := g.table.Apply(one)
		g.count(res)
		g.noteRefused(d.Origin, res)
		if res.Applied > 0 {
			g.relay(one, direct)
		}
	}
}

func (g *Gossip) count(res routes.Result) {
	if res.Applied > 0 {
		g.m.IncrCounter([]string{"gossip", "ops", "applied"}, float32(res.Applied))
	}
	if res.Stale > 0 {
		g.m.IncrCounter([]string{"gossip", "ops", "stale"}, float32(res.Stale))
	}
	if res.Invalid > 0 {
		g.m.IncrCounter([]string{"gossip", "ops", "invalid"}, float32(res.Invalid))
	}
}

// noteRefused logs and counts an origin whose records passed the budget
// and are no longer held (routes' receive.go): loudly, as an agent that
// sends more than every agent holds is faulty or given other bounds.
func (g *Gossip) noteRefused(origin string, res routes.Result) {
	if !res.Refused {
		return
	}
	g.m.IncrCounter([]string{"gossip", "origins", "refused"}, 1)
	g.log.Error("holding none of an agent's records: they pass this agent's budget (--max-records, --max-records-mib); give every agent the same bounds, or find what fills that agent",
		"origin", origin, "records", res.RefusedUsage.Records, "bytes", res.RefusedUsage.Bytes)
}

func (g *Gossip) malformed(what string) {
	g.m.IncrCounter([]string{"gossip", "messages", "malformed"}, 1)
	g.log.Debug("dropped malformed message", "kind", what)
}
