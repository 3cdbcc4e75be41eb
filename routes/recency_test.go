package routes

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

func brokerAt(addr string) Record {
	return Record{Broker: &Broker{Cluster: "C", Name: "b", ID: 0, Addr: addr}}
}

func servedAddr(t *Table) string { return t.Clusters().BrokerAddrTable["b"].BrokerAddrs[0] }

// The newer registration of a broker id is served, whichever origin's name
// sorts first, on every replica; a re-registration changes nothing unless
// another agent's registration is served over it (the broker came back).
func TestNewerRegistrationIsServed(t *testing.T) {
	a, z := NewTable("a", 1), NewTable("z", 1)
	both := func(d Delta) {
		t.Helper()
		a.Apply(d)
		z.Apply(d)
	}
	step := func(tb *Table, addr string, wantOp bool) {
		t.Helper()
		d, ok := tb.ApplyLocal([]Record{brokerAt(addr)}, nil)
		if ok != wantOp {
			t.Fatalf("%s registering %s: op %v, want %v", tb.Local(), addr, ok, wantOp)
		}
		both(d)
		for _, r := range []*Table{a, z} {
			if got := servedAddr(r); got != addr {
				t.Fatalf("after %s registered %s, %s serves %q", tb.Local(), addr, r.Local(), got)
			}
		}
	}
	step(a, "10.0.0.1", true)
	step(z, "10.0.0.2", true)  // the higher name, newer: served
	step(z, "10.0.0.2", false) // a re-registration: nothing to send
	step(a, "10.0.0.1", true)  // back on a, a's record unchanged: stamped anew
	step(a, "10.0.0.1", false)
	// A caller's record is never stamped in place.
	r := brokerAt("10.0.0.3")
	a.ApplyLocal([]Record{r}, nil)
	if r.Broker.Stamp != 0 {
		t.Fatalf("ApplyLocal stamped the caller's record: %d", r.Broker.Stamp)
	}
	// A restored record keeps its stamp, and the clock moves past it.
	if _, ok := z.ApplyLocal([]Record{{Broker: &Broker{Cluster: "C", Name: "r", Addr: "x", Stamp: 1 << 40}}}, nil); !ok {
		t.Fatal("restored record not applied")
	}
	if got := z.Brokers("r")[0].Stamp; got != 1<<40 {
		t.Fatalf("restored stamp %d", got)
	}
	if s := z.Stamp(); s <= 1<<40 {
		t.Fatalf("clock %d did not witness the restored stamp", s)
	}
}

func TestClaimWins(t *testing.T) {
	for _, c := range []struct {
		a, b Claim
		want bool
	}{
		{Claim{2, "z"}, Claim{1, "a"}, true},  // later stamp, whatever the name
		{Claim{1, "a"}, Claim{2, "z"}, false}, //
		{Claim{1, "a"}, Claim{1, "z"}, true},  // tie: lower origin
		{Claim{1, "z"}, Claim{1, "a"}, false},
		{Claim{1, "a"}, Claim{1, "a"}, false}, // irreflexive
	} {
		if got := c.a.Wins(c.b); got != c.want {
			t.Errorf("%+v.Wins(%+v) = %v", c.a, c.b, got)
		}
	}
	if !brokerBefore(&Broker{StateVersion: 2, Stamp: 1}, "z", &Broker{StateVersion: 1, Stamp: 9}, "a") {
		t.Error("a higher stateVersion must come before recency")
	}
}

// TestRecencyProperty runs random schedules of registrations of one broker
// id on several agents, delivered reordered, duplicated or dropped, then
// anti-entropy. Every replica must serve the same address, and never one
// whose registration an agent had seen before it registered another
// address that is still held: a registration made after seeing another is
// newer, whatever the names.
func TestRecencyProperty(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		if err := runRecencySchedule(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

func runRecencySchedule(seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	n := 2 + rng.Intn(4)
	nodes := make([]*simNode, n)
	seen := make([]map[int]bool, n) // events each node has applied
	live := make([]int, n)          // the event of each node's live record, -1 none
	var events []map[int]bool       // what its node had seen when each event was made
	type msg struct {
		to, event int
		d         Delta
	}
	var inflight []msg
	for i := range nodes {
		name := fmt.Sprintf("n%d", rng.Intn(1000)) // names in no order
		nodes[i] = &simNode{name: fmt.Sprintf("%s-%d", name, i), inc: 1}
		nodes[i].t = NewTable(nodes[i].name, 1)
		seen[i], live[i] = map[int]bool{}, -1
	}
	for step := 0; step < 150; step++ {
		i := rng.Intn(n)
		switch r := rng.Intn(100); {
		case r < 45:
			d, ok := nodes[i].t.ApplyLocal([]Record{brokerAt(fmt.Sprintf("10.0.0.%d", rng.Intn(4)))}, nil)
			if !ok {
				continue
			}
			ev := len(events)
			events = append(events, clone(seen[i]))
			seen[i][ev], live[i] = true, ev
			for j := range nodes {
				for k := 0; j != i && rng.Intn(10) > 0 && k < 1+rng.Intn(2); k++ {
					inflight = append(inflight, msg{j, ev, d})
				}
			}
		case r < 50:
			if d, ok := nodes[i].t.ApplyLocal(nil, []string{BrokerKey("b", 0)}); ok {
				live[i] = -1
				for j := range nodes {
					if j != i {
						inflight = append(inflight, msg{j, -1, d})
					}
				}
			}
		case len(inflight) > 0:
			k := rng.Intn(len(inflight))
			m := inflight[k]
			inflight = append(inflight[:k], inflight[k+1:]...)
			nodes[m.to].t.Apply(m.d)
			if m.event >= 0 {
				seen[m.to][m.event] = true
			}
		}
	}
	for _, m := range inflight {
		if rng.Intn(3) > 0 {
			nodes[m.to].t.Apply(m.d)
		}
	}
	if err := antiEntropy(rng, nodes); err != nil {
		return err
	}
	want := nodes[0].t.Clusters()
	for _, nd := range nodes[1:] {
		if got := nd.t.Clusters(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%s serves %v, %s serves %v", nd.name, got.BrokerAddrTable, nodes[0].name, want.BrokerAddrTable)
		}
	}
	// The served record is the winning claim among the live ones; no
	// other live registration of another address was made after seeing it.
	served, winner := servedAddr(nodes[0].t), -1
	var best Claim
	for i, ev := range live {
		rec, ok := nodes[i].t.LocalRecord(BrokerKey("b", 0))
		if ev < 0 || !ok {
			continue
		}
		if c := (Claim{rec.Broker.Stamp, nodes[i].name}); winner < 0 || c.Wins(best) {
			winner, best = i, c
		}
	}
	if winner < 0 {
		if served != "" {
			return fmt.Errorf("serves %q with no registration live", served)
		}
		return nil
	}
	if rec, _ := nodes[winner].t.LocalRecord(BrokerKey("b", 0)); rec.Broker.Addr != served {
		return fmt.Errorf("serves %q, the newest registration is %s's %s", served, nodes[winner].name, rec.Broker.Addr)
	}
	for i, ev := range live {
		rec, ok := nodes[i].t.LocalRecord(BrokerKey("b", 0))
		if ev < 0 || !ok || rec.Broker.Addr == served {
			continue
		}
		if events[ev][live[winner]] {
			return fmt.Errorf("%s registered %s after seeing %s's %s, yet %s is served", nodes[i].name, rec.Broker.Addr,
				nodes[winner].name, served, served)
		}
	}
	return nil
}

func clone(m map[int]bool) map[int]bool {
	out := make(map[int]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestParseKeys(t *testing.T) {
	if name, id, ok := ParseBrokerKey(BrokerKey("b-1", -1)); !ok || name != "b-1" || id != -1 {
		t.Errorf("broker key: %q %d %v", name, id, ok)
	}
	if b, topic, ok := ParseQueueKey(QueueKey("b-1", "T%RETRY%g")); !ok || b != "b-1" || topic != "T%RETRY%g" {
		t.Errorf("queue key: %q %q %v", b, topic, ok)
	}
	u := "dubbo://10.0.0.1:20880/org.Foo?a=b/c"
	if i, c, got, ok := ParseURLKey(URLKey("org.Foo", "providers", u)); !ok || i != "org.Foo" || c != "providers" || got != u {
		t.Errorf("url key: %q %q %q %v", i, c, got, ok)
	}
	for _, bad := range []string{"", "broker/", "broker/x", "broker/x/y", "broker//0", "queue/x", "queue//t", "queue/x/",
		"url/i/c", "url/i//u", QueueKey("b", "t")[1:], KVKey("n", "k"), ZnodeKey("/a", "")} {
		_, _, okB := ParseBrokerKey(bad)
		_, _, okQ := ParseQueueKey(bad)
		_, _, _, okU := ParseURLKey(bad)
		if okB || okQ || okU {
			t.Errorf("%q parsed as a key of a kind it is not: broker %v queue %v url %v", bad, okB, okQ, okU)
		}
	}
}
