package routes

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// TestConvergenceProperty runs hundreds of random schedules: nodes make local
// changes, deltas are delivered reordered, duplicated or dropped, peers trade
// snapshots mid-run, nodes restart with a new incarnation. Then anti-entropy
// as the gossip layer runs it (pull from a peer that is ahead, from the
// origin when diverged) must leave every replica holding exactly what each
// origin holds, with identical digests.
func TestConvergenceProperty(t *testing.T) {
	defer func(n int) { maxTombstones = n }(maxTombstones)
	maxTombstones = 8 // make tombstone collection and floors part of every run
	for seed := int64(1); seed <= 300; seed++ {
		if err := runSchedule(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

type simNode struct {
	name string
	inc  uint64
	t    *Table
}

func runSchedule(seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	n := 3 + rng.Intn(3)
	nodes := make([]*simNode, n)
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		nodes[i] = &simNode{name: name, inc: 1, t: NewTable(name, 1)}
	}
	type msg struct {
		to int
		d  Delta
	}
	var inflight []msg
	for step := 0; step < 200; step++ {
		i := rng.Intn(n)
		nd := nodes[i]
		switch r := rng.Intn(100); {
		case r < 55: // local change
			d, ok := nd.t.ApplyLocal(randomPuts(rng), randomDeletes(rng))
			if !ok {
				continue
			}
			for j := range nodes {
				if j == i || rng.Intn(10) == 0 { // 10% dropped outright
					continue
				}
				for k := 0; k < 1+rng.Intn(2); k++ { // sometimes duplicated
					inflight = append(inflight, msg{j, d})
				}
			}
		case r < 62: // a cluster-scoped rule written or deleted on this node
			k := URLKey("I", "routers", fmt.Sprintf("route://0.0.0.0/I?r=%d", rng.Intn(4)))
			var d Delta
			var ok bool
			if rng.Intn(3) == 0 {
				d, ok = nd.t.ApplyRules(nil, []string{k})
			} else {
				d, ok = nd.t.ApplyRules([]Record{{URL: &URL{Interface: "I", Category: "routers", URL: k[len("url/I/routers/"):]}}}, nil)
			}
			if !ok {
				continue
			}
			for j := range nodes {
				if j != i && rng.Intn(10) > 0 {
					inflight = append(inflight, msg{j, d})
				}
			}
		case r < 85 && len(inflight) > 0: // deliver a random in-flight delta
			k := rng.Intn(len(inflight))
			m := inflight[k]
			inflight = append(inflight[:k], inflight[k+1:]...)
			nodes[m.to].t.Apply(m.d)
		case r < 95: // a peer hands over a (non-authoritative) snapshot
			j := rng.Intn(n)
			for _, o := range nodes[j].t.Origins() {
				if s, ok := nodes[j].t.Snapshot(o); ok && o != nd.name {
					nd.t.Merge(s)
				}
			}
		default: // restart: a new incarnation that re-registers some records
			nd.inc++
			nd.t = NewTable(nd.name, nd.inc)
			nd.t.ApplyLocal(randomPuts(rng), nil)
			for _, other := range nodes { // peers seeing its new tags (gossip's Admit)
				if other != nd && rng.Intn(2) == 0 {
					other.t.Admit(nd.name, nd.inc)
				}
			}
		}
	}
	for _, m := range inflight { // late deliveries, some lost
		if rng.Intn(3) > 0 {
			nodes[m.to].t.Apply(m.d)
		}
	}
	if err := antiEntropy(rng, nodes); err != nil {
		return err
	}
	if err := checkConverged(nodes); err != nil {
		return err
	}
	return checkViewsAgree(nodes)
}

// checkViewsAgree compares what queries answer, not only the raw records,
// so a secondary index that drifted from its records is caught too.
func checkViewsAgree(nodes []*simNode) error {
	first := nodes[0].t
	for _, nd := range nodes[1:] {
		if !reflect.DeepEqual(nd.t.URLs("S", ""), first.URLs("S", "")) {
			return fmt.Errorf("%s answers other URLs than %s", nd.name, nodes[0].name)
		}
		if !reflect.DeepEqual(nd.t.Topics(), first.Topics()) || !reflect.DeepEqual(nd.t.Clusters(), first.Clusters()) {
			return fmt.Errorf("%s answers other topics or clusters than %s", nd.name, nodes[0].name)
		}
		for _, topic := range first.Topics() {
			a, _ := first.TopicRoute(topic)
			b, _ := nd.t.TopicRoute(topic)
			if !reflect.DeepEqual(a, b) {
				return fmt.Errorf("route of %s differs on %s", topic, nd.name)
			}
		}
	}
	return nil
}

func antiEntropy(rng *rand.Rand, nodes []*simNode) error {
	byName := map[string]*simNode{}
	for _, nd := range nodes {
		byName[nd.name] = nd
	}
	for round := 0; round < 200; round++ {
		if checkConverged(nodes) == nil {
			return nil
		}
		a, b := nodes[rng.Intn(len(nodes))], nodes[rng.Intn(len(nodes))]
		mine := a.t.Digest()
		for o, theirs := range b.t.Digest() {
			if o == a.name {
				continue
			}
			e, have := mine[o]
			switch {
			case o == RulesOrigin:
				if e != theirs { // rules merge from any peer
					s, _ := b.t.Snapshot(o)
					a.t.Merge(s)
				}
			case !have || e.Behind(theirs):
				s, _ := b.t.Snapshot(o)
				a.t.Merge(s)
			case e.Diverged(theirs):
				s, _ := byName[o].t.Snapshot(o)
				a.t.Merge(s)
			}
		}
	}
	return checkConverged(nodes)
}

func checkConverged(nodes []*simNode) error {
	rules := liveRecords(nodes[0].t, RulesOrigin)
	for _, nd := range nodes[1:] {
		if got := liveRecords(nd.t, RulesOrigin); !reflect.DeepEqual(got, rules) {
			return fmt.Errorf("%s holds %d rules, %s holds %d", nd.name, len(got), nodes[0].name, len(rules))
		}
	}
	for _, origin := range nodes {
		want := liveRecords(origin.t, origin.name)
		wantEntry := origin.t.Digest()[origin.name]
		for _, nd := range nodes {
			if nd == origin {
				continue
			}
			if got := liveRecords(nd.t, origin.name); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("%s holds %d records of %s, origin has %d", nd.name, len(got), origin.name, len(want))
			}
			if e, ok := nd.t.Digest()[origin.name]; (ok || len(want) > 0) && e.Hash != wantEntry.Hash {
				return fmt.Errorf("%s's digest of %s differs from the origin's", nd.name, origin.name)
			}
		}
	}
	return nil
}

func liveRecords(t *Table, origin string) map[string]Record {
	out := map[string]Record{}
	s, ok := t.Snapshot(origin)
	if !ok {
		return out
	}
	for _, op := range s.Ops {
		if op.Rec != nil {
			out[op.Key] = *op.Rec
		}
	}
	return out
}

func randomPuts(rng *rand.Rand) []Record {
	var puts []Record
	for k := rng.Intn(4); k > 0; k-- {
		b := fmt.Sprintf("b%d", rng.Intn(3))
		switch rng.Intn(3) {
		case 0:
			puts = append(puts, broker("c", b, int64(rng.Intn(2)), fmt.Sprintf("10.0.0.%d:10911", rng.Intn(9))))
		case 1:
			puts = append(puts, Record{URL: &URL{Interface: "S", Category: "providers", URL: fmt.Sprintf("dubbo://10.0.0.%d:1/S", rng.Intn(6))}})
		default:
			puts = append(puts, queue(b, fmt.Sprintf("T%d", rng.Intn(6)), 1+rng.Intn(8)))
		}
	}
	return puts
}

func randomDeletes(rng *rand.Rand) []string {
	var dels []string
	for k := rng.Intn(3); k > 0; k-- {
		dels = append(dels, QueueKey(fmt.Sprintf("b%d", rng.Intn(3)), fmt.Sprintf("T%d", rng.Intn(6))))
	}
	return dels
}
