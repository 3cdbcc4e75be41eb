package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/chaos"
	"github.com/namecast/namecast/routes"
)

// replicas builds replicas of the named nodes, each seeing all of them
// alive, with empty tables.
func replicas(names ...string) []chaos.Replica {
	var out []chaos.Replica
	members := func() []gossip.Member {
		var ms []gossip.Member
		for _, n := range names {
			ms = append(ms, gossip.Member{Name: n, Status: gossip.StatusAlive})
		}
		return ms
	}
	for i, n := range names {
		out = append(out, chaos.Replica{Name: n, Table: routes.NewTable(n, uint64(i+1)), Members: members})
	}
	return out
}

// register applies reg on origin's table and copies the change to every
// other replica, as gossip would.
func register(t *testing.T, rs []chaos.Replica, origin int, reg chaos.Registration) {
	t.Helper()
	recs, err := reg.Records()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := rs[origin].Table.ApplyLocal(recs, nil)
	for i, r := range rs {
		if i != origin {
			r.Table.Apply(d)
		}
	}
}

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), substr) {
		t.Fatalf("got %v, want an error containing %q", err, substr)
	}
}

var (
	url1   = chaos.Registration{URL: "dubbo://10.0.0.1:20880/com.chaos.A?version=1"}
	url2   = chaos.Registration{URL: "dubbo://10.0.0.2:20880/com.chaos.A?version=1"}
	broker = chaos.Registration{Cluster: "c", BrokerName: "b1", Addr: "10.1.0.1:10911", Topics: []string{"T1", "T2"}}
)

func TestCheckPassesWhenConverged(t *testing.T) {
	rs := replicas("a", "b", "c")
	m := chaos.NewModel()
	now := time.Now()
	for _, r := range rs {
		m.Started(r.Name)
	}
	for _, reg := range []chaos.Registration{url1, broker} {
		register(t, rs, 0, reg)
		if err := m.Registered("a", reg, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := chaos.Check(m, rs, now); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFindsLostRecord(t *testing.T) {
	rs := replicas("a", "b")
	m := chaos.NewModel()
	now := time.Now()
	m.Started("a")
	m.Started("b")
	register(t, rs, 0, url1)
	_ = m.Registered("a", url1, now)
	_ = m.Registered("a", url2, now) // the model has it; no replica does
	wantErr(t, chaos.Check(m, rs, now), "lost url/com.chaos.A/providers/dubbo://10.0.0.2")
}

func TestCheckFindsDivergedReplica(t *testing.T) {
	rs := replicas("a", "b")
	m := chaos.NewModel()
	m.Started("a")
	m.Started("b")
	recs, _ := url1.Records()
	rs[0].Table.ApplyLocal(recs, nil) // never reaches b
	_ = m.Registered("a", url1, time.Now())
	wantErr(t, chaos.Check(m, rs, time.Now()), "digests differ")
}

func TestCheckFindsDeadOwnersRecords(t *testing.T) {
	rs := replicas("a", "b", "c")
	m := chaos.NewModel()
	for _, r := range rs {
		m.Started(r.Name)
	}
	register(t, rs, 2, url1)
	_ = m.Registered("c", url1, time.Now())
	m.Crashed("c", nil)
	// a and b forget nothing of c, and still see only themselves alive.
	live := rs[:2]
	for i := range live {
		live[i].Members = func() []gossip.Member {
			return []gossip.Member{{Name: "a", Status: gossip.StatusAlive}, {Name: "b", Status: gossip.StatusAlive}, {Name: "c", Status: gossip.StatusDead}}
		}
	}
	wantErr(t, chaos.Check(m, live, time.Now()), "of c, which is down")
}

func TestCheckFindsMembershipDisagreement(t *testing.T) {
	rs := replicas("a", "b")
	m := chaos.NewModel()
	m.Started("a")
	m.Started("b")
	rs[1].Members = func() []gossip.Member { return []gossip.Member{{Name: "b", Status: gossip.StatusAlive}} }
	wantErr(t, chaos.Check(m, rs, time.Now()), "b sees [b] alive")
}

func TestCheckExpiresTTLs(t *testing.T) {
	rs := replicas("a", "b")
	m := chaos.NewModel()
	m.Started("a")
	m.Started("b")
	start := time.Now()
	reg := url1
	reg.TTL = time.Second
	register(t, rs, 0, reg)
	_ = m.Registered("a", reg, start)
	if err := chaos.Check(m, rs, start.Add(500*time.Millisecond)); err != nil {
		t.Fatalf("before the TTL: %v", err)
	}
	wantErr(t, chaos.Check(m, rs, start.Add(time.Second)), "which the model has withdrawn, expired or never made")
}

func TestCheckSettlesRules(t *testing.T) {
	rule := chaos.Registration{URL: "route://0.0.0.0/com.chaos.A?category=routers&dynamic=false&rule=r1"}
	if !rule.Rule() {
		t.Fatal("a dynamic=false URL is not a rule")
	}
	rs := replicas("a", "b", "c")
	m := chaos.NewModel()
	for _, r := range rs {
		m.Started(r.Name)
	}
	recs, _ := rule.Records()
	rs[2].Table.ApplyRules(recs, nil) // c wrote it and crashed before telling anyone
	_ = m.Registered("c", rule, time.Now())
	m.Crashed("c", []*routes.Table{rs[0].Table, rs[1].Table})
	live := rs[:2]
	for i := range live {
		live[i].Members = func() []gossip.Member {
			return []gossip.Member{{Name: "a", Status: gossip.StatusAlive}, {Name: "b", Status: gossip.StatusAlive}}
		}
	}
	if err := chaos.Check(m, live, time.Now()); err != nil {
		t.Fatalf("a rule that died with its only holder must be unsettled: %v", err)
	}

	// A rule held elsewhere at the crash stays settled: losing it fails.
	m2 := chaos.NewModel()
	rs2 := replicas("a", "b", "c")
	for _, r := range rs2 {
		m2.Started(r.Name)
	}
	rs2[1].Table.ApplyRules(recs, nil)
	_ = m2.Registered("b", rule, time.Now())
	m2.Crashed("c", []*routes.Table{rs2[0].Table, rs2[1].Table})
	for i := range rs2[:2] {
		rs2[i].Members = live[0].Members
	}
	wantErr(t, chaos.Check(m2, rs2[:2], time.Now()), "digests differ")
}

func TestUnregisterBeforeTTLIsAnAnomaly(t *testing.T) {
	m := chaos.NewModel()
	m.Started("a")
	now := time.Now()
	reg := url1
	reg.TTL = 10 * time.Second
	_ = m.Registered("a", reg, now)
	m.Unregistered("a", reg, false, now.Add(time.Second))
	if a := m.Anomalies(); len(a) != 1 {
		t.Fatalf("anomalies %q, want the lost registration", a)
	}
}
