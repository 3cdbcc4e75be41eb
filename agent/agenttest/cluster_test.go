package agenttest_test

import (
	"net"
	"testing"

	"github.com/namecast/namecast/agent/agenttest"
)

// A restarted agent binds its doors where it listened before; when another
// socket took one of those ports meanwhile, it comes back on a new port
// instead of failing the test (TestChaos failed so once, its restarted
// agent's RocketMQ port taken).
func TestRestartWhoseLastPortIsTakenListensElsewhere(t *testing.T) {
	c := agenttest.Start(t, 1)
	before := map[string]string{}
	for _, d := range c.Agent(0).Doors() {
		before[d.Name] = d.Addr
	}
	c.Crash(0)
	taken, ok := before["rocketmq"]
	if !ok {
		t.Fatalf("no rocketmq door among %v", before)
	}
	ln, err := net.Listen("tcp", taken)
	if err != nil {
		t.Skipf("could not take %s before the restart: %v", taken, err)
	}
	defer ln.Close()

	a := c.Restart(0)
	for _, d := range a.Doors() {
		switch {
		case d.Name == "rocketmq" && d.Addr == taken:
			t.Errorf("rocketmq door listens on %s, which this test holds", d.Addr)
		case d.Name != "rocketmq" && before[d.Name] != "" && d.Addr != before[d.Name]:
			t.Errorf("%s door moved from %s to %s; only the taken port should move", d.Name, before[d.Name], d.Addr)
		}
	}
}
