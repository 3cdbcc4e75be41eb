package gossiptest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/internal/testutil"
)

// testConfig returns memberlist timings about 10 times faster than
// DefaultLocalConfig, so a partition is detected in about a second. The
// stream timeout stays long: a starved 2-core race build can take hundreds
// of milliseconds to schedule the other end of a join, and dials across a
// partition fail at once anyway.
func testConfig(tr *Transport, logs *logCapture) *memberlist.Config {
	c := memberlist.DefaultLocalConfig()
	c.Name = tr.Name()
	c.Transport = tr
	c.LogOutput = logs
	c.ProbeInterval = 100 * time.Millisecond
	c.ProbeTimeout = 50 * time.Millisecond
	c.GossipInterval = 20 * time.Millisecond
	c.PushPullInterval = 500 * time.Millisecond
	c.TCPTimeout = 2 * time.Second
	c.IndirectChecks = 2
	c.SuspicionMult = 3
	c.SuspicionMaxTimeoutMult = 2
	c.AwarenessMaxMultiplier = 2
	// Forget dead nodes at once instead of gossiping to them for a while
	// (15s by default), which could quietly undo a partition after Heal.
	c.GossipToTheDeadTime = 0
	return c
}

// cluster is n memberlists on one Network, torn down when the test ends.
type cluster struct {
	// drain is how long shutdown waits after stopping the nodes. Only a
	// synctest bubble needs it: a probe in flight at Shutdown waits for
	// its ack timer, which fires only while the bubble's clock runs, and
	// the clock stops with the test's goroutine.
	drain time.Duration
	net   *Network
	trs   []*Transport
	nodes []*memberlist.Memberlist
	logs  []*logCapture
}

// clusterSpec describes a cluster for startCluster; the zero value is a
// faultless network of nodes with testConfig timings.
type clusterSpec struct {
	seed   int64
	faults func(*Network) // set before the nodes start
	config func(*Transport, *logCapture) *memberlist.Config
	drain  time.Duration // see cluster.drain
}

// startCluster creates n nodes and joins them all through node-0.
func startCluster(t *testing.T, n int, spec clusterSpec) *cluster {
	t.Helper()
	if spec.config == nil {
		spec.config = testConfig
	}
	c := &cluster{net: NewNetwork(spec.seed), drain: spec.drain}
	t.Cleanup(func() {
		c.shutdown()
		if t.Failed() {
			c.dumpLogs(t)
		}
	})
	if spec.faults != nil {
		spec.faults(c.net)
	}
	for i := range n {
		logs := &logCapture{}
		tr := c.net.NewTransport(nodeName(i))
		m, err := memberlist.Create(spec.config(tr, logs))
		if err != nil {
			t.Fatalf("create %s: %v", nodeName(i), err)
		}
		c.trs = append(c.trs, tr)
		c.nodes = append(c.nodes, m)
		c.logs = append(c.logs, logs)
	}
	for i := range c.nodes[1:] {
		c.join(t, i+1, 0)
	}
	return c
}

// join makes node i join through node j, retrying because a join, one
// stream exchange with a deadline, can time out on a starved machine.
func (c *cluster) join(t *testing.T, i, j int) {
	t.Helper()
	testutil.Eventually(t, convergeTimeout, func() error {
		_, err := c.nodes[i].Join([]string{c.addr(j)})
		return err
	})
}

// shutdown stops every node and the network. It is idempotent.
func (c *cluster) shutdown() {
	for _, m := range c.nodes {
		_ = m.Shutdown()
	}
	c.net.Close()
	time.Sleep(c.drain)
}

func nodeName(i int) string { return fmt.Sprintf("node-%d", i) }

func names(idx ...int) []string {
	var s []string
	for _, i := range idx {
		s = append(s, nodeName(i))
	}
	return s
}

func (c *cluster) addr(i int) string { return c.trs[i].Addr() }

// members returns the state of each member node i has not declared dead.
func (c *cluster) members(i int) map[string]memberlist.NodeStateType {
	m := make(map[string]memberlist.NodeStateType)
	for _, n := range c.nodes[i].Members() {
		m[n.Name] = n.State
	}
	return m
}

// sees reports an error unless each node in idx has exactly want as members,
// all alive: no other node is suspect, let alone alive.
func (c *cluster) sees(want []string, idx ...int) error {
	want = slices.Sorted(slices.Values(want))
	for _, i := range idx {
		m := c.members(i)
		got := slices.Sorted(maps.Keys(m))
		if !slices.Equal(got, want) {
			return fmt.Errorf("%s has members %v, want %v", nodeName(i), got, want)
		}
		for name, state := range m {
			if state != memberlist.StateAlive {
				return fmt.Errorf("%s sees %s in state %d, want alive", nodeName(i), name, state)
			}
		}
	}
	return nil
}

// knowsAny reports an error if a node in idx has any of others as a member.
func (c *cluster) knowsAny(idx []int, others []string) error {
	for _, i := range idx {
		m := c.members(i)
		for _, o := range others {
			if _, ok := m[o]; ok {
				return fmt.Errorf("%s has %s as a member", nodeName(i), o)
			}
		}
	}
	return nil
}

func (c *cluster) all() []int {
	idx := make([]int, len(c.nodes))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func (c *cluster) dumpLogs(t *testing.T) {
	for i, l := range c.logs {
		t.Logf("memberlist log of %s:\n%s", nodeName(i), l.String())
	}
}

// logCapture keeps memberlist's non-debug log lines, to check how it reached
// a state and to show on failure; writing to t.Log instead would panic when
// memberlist logs after the test ends.
type logCapture struct {
	mu    sync.Mutex
	lines []string
}

func (l *logCapture) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("[DEBUG]")) {
		l.mu.Lock()
		l.lines = append(l.lines, strings.TrimSpace(string(p)))
		l.mu.Unlock()
	}
	return len(p), nil
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *logCapture) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}
