package zookeeper_test

import (
	"testing"

	"github.com/namecast/namecast/agent/agenttest"
)

// zkAgents starts n agents whose ZooKeeper ports serve on free loopback
// ports, and returns the cluster and those addresses.
func zkAgents(t testing.TB, n int, opts ...agenttest.Option) (*agenttest.Cluster, []string) {
	t.Helper()
	c := agenttest.Start(t, n, opts...)
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = zkAddr(t, c, i)
	}
	return c, addrs
}

// zkAddr is agent i's ZooKeeper address.
func zkAddr(t testing.TB, c *agenttest.Cluster, i int) string {
	t.Helper()
	addr := c.Agent(i).Addr("zookeeper")
	if addr == "" {
		t.Fatalf("agent %d serves no ZooKeeper port", i)
	}
	return addr
}

// The differential run: the script against a real ZooKeeper and against
// an agent, in the same run; the transcripts must match but for the named
// deviations.
func TestDifferentialAgent(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	_, addrs := zkAgents(t, 1)
	ref := runScript(t, z.Addr)
	got := runScript(t, addrs[0])
	if diffs := diffTranscripts(ref, got); len(diffs) > 0 {
		t.Fatalf("the agent answered the script differently from ZooKeeper 3.8 (%d differences):\n%s\n\nagent transcript:\n%s",
			len(diffs), joinLines(diffs), got)
	}
}

// Curator, the way Dubbo 3 uses it, with the provider on agent A and the
// consumer on agent B of a 3-agent cluster.
func TestCuratorDubboFlowAgents(t *testing.T) {
	t.Parallel()
	_, addrs := zkAgents(t, 3)
	runDubboFlow(t, addrs[0], addrs[1])
}

// kazoo's register/watch flow with the provider on agent A and the
// consumer on agent C.
func TestKazooDubboFlowAgents(t *testing.T) {
	t.Parallel()
	_, addrs := zkAgents(t, 3)
	runKazooFlow(t, addrs[0], addrs[2])
}

func joinLines(l []string) string {
	s := ""
	for _, x := range l {
		s += x + "\n"
	}
	return s
}

// The door script differentially: on ZooKeeper both sessions share the
// server; on namecast they are on two agents of one cluster, so every
// answer about the other session's nodes crossed gossip.
func TestDoorScriptAgents(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	_, addrs := zkAgents(t, 2)
	ref := runDoorScript(t, z.Addr, z.Addr)
	got := runDoorScript(t, addrs[0], addrs[1])
	if diffs := diffTranscripts(ref, got); len(diffs) > 0 {
		t.Fatalf("the agents answered the door script differently from ZooKeeper 3.8 (%d differences):\n%s\n\nagent transcript:\n%s",
			len(diffs), joinLines(diffs), got)
	}
}
