package agent

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/namecast/namecast/routes"
)

// rememberQuery asks every member what it holds of an origin's previous
// incarnation (routes.Remember): how a restarted agent learns whether
// what it restored from its data dir is older than what the cluster saw
// of it (lease.Store.Settle).
const rememberQuery = "remember"

// settleTimeout bounds how long a restarted agent waits for its peers'
// answers before it publishes what it restored.
const settleTimeout = 5 * time.Second

// settlePeers is how many peers a restarted agent asks: every one that
// saw the lost change holds the evidence, and each answer carries the
// restored records, so not all of a large cluster.
const settlePeers = 3

// rememberAsk is rememberQuery's payload.
type rememberAsk struct {
	Origin string   `json:"origin"`
	Below  uint64   `json:"below"` // the asking run's incarnation
	Keys   []string `json:"keys"`
}

// answerRemember answers a peer's rememberQuery: empty when we hold
// nothing of its previous incarnations.
func (a *Agent) answerRemember(payload []byte) ([]byte, error) {
	var ask rememberAsk
	if err := json.Unmarshal(payload, &ask); err != nil {
		return nil, err
	}
	r, ok := a.table.Remember(ask.Origin, ask.Below, ask.Keys)
	if !ok {
		return nil, nil
	}
	return json.Marshal(r)
}

// settleRestored runs between restoring the data dir's registrations and
// publishing them, while gossip withholds our origin: it joins the
// members it was given (or the previous run's, rejoin), asks a few of
// them (settlePeers) what they hold of our previous incarnation, and has the lease store drop
// what they saw withdrawn or changed since the files were written. It
// returns the delta of that withdrawal. With nobody to ask, or nobody
// answering, what was restored stands: an agent alone cannot know.
func (a *Agent) settleRestored(rejoin []string) routes.Delta {
	defer a.gossip.Release()
	addrs := slices.Concat(a.cfg.Join, a.cfg.RetryJoin, rejoin)
	if len(addrs) == 0 {
		a.log.Info("no peer to ask whether the registrations restored from the data dir are the newest: restored as saved")
		return a.leases.Settle(nil)
	}
	if n, err := a.gossip.Join(addrs); n == 0 {
		a.log.Warn("no peer answered before publishing the registrations restored from the data dir: restored as saved, unchecked", "tried", addrs, "err", err)
		return a.leases.Settle(nil)
	}
	payload, err := json.Marshal(rememberAsk{Origin: a.cfg.NodeName, Below: a.table.LocalInc(), Keys: a.leases.Unsettled()})
	if err != nil {
		return a.leases.Settle(nil)
	}
	ctx, cancel := context.WithTimeout(a.ctx, settleTimeout)
	defer cancel()
	var views []routes.Remembered
	asked := 0
	for from, ans := range a.gossip.QuerySome(ctx, rememberQuery, payload, settlePeers) {
		if from == a.cfg.NodeName {
			continue
		}
		asked++
		var r routes.Remembered
		if ans.Error == "" && len(ans.Payload) > 0 && json.Unmarshal(ans.Payload, &r) == nil {
			views = append(views, r)
		}
	}
	a.log.Info("compared the registrations restored from the data dir with what peers hold of this agent", "answered", asked, "holding", len(views))
	return a.leases.Settle(views)
}

// publishRestored spreads the restored records, but those settled
// withdrew: peers never see them come back, only go.
func (a *Agent) publishRestored(restored, settled routes.Delta) {
	gone := map[string]bool{}
	for _, op := range settled.Ops {
		gone[op.Key] = true
	}
	kept := restored
	kept.Ops = nil
	for _, op := range restored.Ops {
		if !gone[op.Key] {
			kept.Ops = append(kept.Ops, op)
		}
	}
	a.gossip.Publish(kept)
	a.gossip.Publish(settled)
}
