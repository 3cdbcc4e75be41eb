package agent_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// Persistent (dynamic=false) URLs are cluster-scoped rules: any agent may
// write or delete one, and conflicting writes resolve last-writer-wins by
// (hybrid logical time, writer). These tests drive conflicts through the HTTP API
// and check that every agent ends with the same winner.

const rulesIface = "com.example.Svc"

func ruleURL(n int) string {
	return fmt.Sprintf("route://0.0.0.0/%s?category=routers&dynamic=false&rule=r%d", rulesIface, n)
}

// ruleOp is what one agent holds for a rule key: the winning write.
type ruleOp struct {
	Seq    uint64
	Writer string
	Live   bool
}

// ruleOps lists agent i's rule ops (live rules and tombstones) by key.
func ruleOps(c *agenttest.Cluster, i int) map[string]ruleOp {
	snap, _ := c.Agent(i).Table().Snapshot(routes.RulesOrigin)
	out := map[string]ruleOp{}
	for _, op := range snap.Ops {
		out[op.Key] = ruleOp{op.Seq, op.Writer, op.Rec != nil}
	}
	return out
}

func routers(t *testing.T, addr string) []string {
	var out struct {
		URLs []string `json:"urls"`
	}
	call(t, "GET", addr, "/v1/services/"+rulesIface+"?category=routers", nil, &out)
	return out.URLs
}

// sameRulesEverywhere waits until every running agent holds the same rule
// ops and serves the same routers, and returns agent 0's ops.
func sameRulesEverywhere(t *testing.T, c *agenttest.Cluster) map[string]ruleOp {
	t.Helper()
	var ops map[string]ruleOp
	testutil.Eventually(t, 15*time.Second, func() error {
		running := c.Running()
		ops = ruleOps(c, running[0])
		want := routers(t, c.Agent(running[0]).HTTPAddr())
		for _, i := range running[1:] {
			if got := ruleOps(c, i); !mapsEqual(got, ops) {
				return fmt.Errorf("agent-%d holds rule ops %v, agent-%d %v", i, got, running[0], ops)
			}
			if got := routers(t, c.Agent(i).HTTPAddr()); !slices.Equal(got, want) {
				return fmt.Errorf("agent-%d serves %q, agent-%d %q", i, got, running[0], want)
			}
		}
		return c.Converged()
	})
	return ops
}

func mapsEqual(a, b map[string]ruleOp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// together runs each function at once on its own goroutine and waits: the
// writes land on their agents well within one gossip interval, so each
// agent applies its own before it hears of the other.
func together(fs ...func()) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for _, f := range fs {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-start
			f()
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
}

func TestConcurrentRuleWritesConvergeToOneWinner(t *testing.T) {
	testutil.CheckLeaks(t)
	c := agenttest.Start(t, 3)
	a0, a1 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr()
	put := func(addr string, n int) func() {
		return func() { call(t, "PUT", addr, "/v1/urls", map[string]string{"url": ruleURL(n)}, nil) }
	}
	del := func(addr string, n int) func() {
		return func() { call(t, "DELETE", addr, "/v1/urls?url="+url.QueryEscape(ruleURL(n)), nil, nil) }
	}

	// The same new rule written on two agents at once: two writes with
	// different (time, writer); every agent must keep the same one.
	const rounds = 10
	conflicts := 0
	for n := range rounds {
		together(put(a0, n), put(a1, n))
		if w0, w1 := ruleOps(c, 0), ruleOps(c, 1); w0[ruleKey(n)] != w1[ruleKey(n)] {
			conflicts++
		}
	}
	ops := sameRulesEverywhere(t, c)
	for n := range rounds {
		if op := ops[ruleKey(n)]; !op.Live || !strings.HasPrefix(op.Writer, "agent-0@") && !strings.HasPrefix(op.Writer, "agent-1@") {
			t.Errorf("rule %d: winner %+v, want a live write by agent-0 or agent-1", n, op)
		}
	}
	t.Logf("%d of %d concurrent puts were real conflicts", conflicts, rounds)

	// A delete on one agent racing a delete-and-write-again on another:
	// whichever is last by (time, writer) wins, the same everywhere.
	for n := range rounds {
		together(del(a1, n), func() { del(a0, n)(); put(a0, n)() })
	}
	ops = sameRulesEverywhere(t, c)
	live := 0
	for n := range rounds {
		if ops[ruleKey(n)].Live {
			live++
		}
	}
	t.Logf("after delete/re-put races: %d of %d rules live, the same on every agent", live, rounds)
}

func ruleKey(n int) string {
	return routes.URLKey(rulesIface, "routers", canonRule(n))
}

// canonRule is ruleURL in the agent's canonical form (parameters sorted).
func canonRule(n int) string {
	return fmt.Sprintf("route://0.0.0.0/%s?category=routers&dynamic=false&rule=r%d", rulesIface, n)
}

func TestDeletedRuleStaysDeletedWhenStaleAgentRejoins(t *testing.T) {
	testutil.CheckLeaks(t)
	dir := t.TempDir()
	c := agenttest.Start(t, 3, agenttest.WithDataDirs(dir))
	rule := ruleURL(1)
	if status, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/urls", map[string]string{"url": rule}, nil); status != 200 {
		t.Fatalf("writing the rule: %d", status)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if got := routers(t, addr); !slices.Equal(got, []string{rule}) {
			return fmt.Errorf("routers %q", got)
		}
		return nil
	})
	// agent-2 keeps the rule on disk, then goes away.
	testutil.Eventually(t, 10*time.Second, func() error {
		b, err := os.ReadFile(filepath.Join(dir, "agent-2", "rules.json"))
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "rule=r1") {
			return fmt.Errorf("agent-2 has not saved the rule yet")
		}
		return nil
	})
	gossipAddr, httpAddr := c.Agent(2).GossipAddr(), c.Agent(2).HTTPAddr()
	c.Crash(2)

	// The rule is deleted while agent-2 is away.
	if status, _ := call(t, "DELETE", c.Agent(1).HTTPAddr(), "/v1/urls?url="+url.QueryEscape(rule), nil, nil); status != 200 {
		t.Fatalf("deleting the rule: %d", status)
	}
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if got := routers(t, addr); len(got) != 0 {
			return fmt.Errorf("routers %q after the delete", got)
		}
		return nil
	})

	// agent-2 comes back with its stale copy: the delete wins everywhere.
	// (Same addresses: memberlist refuses a dead name on a new address
	// for a while.)
	c.RestartWith(2, func(cfg *agent.Config) { cfg.BindAddr, cfg.HTTPAddr = gossipAddr, httpAddr })
	c.WaitMembers(3)
	ops := sameRulesEverywhere(t, c)
	if op := ops[ruleKey(1)]; op.Live {
		t.Fatalf("the deleted rule came back: %+v", op)
	}
	for _, i := range c.Running() {
		if got := routers(t, c.Agent(i).HTTPAddr()); len(got) != 0 {
			t.Fatalf("agent-%d serves %q after agent-2 rejoined", i, got)
		}
	}
}
