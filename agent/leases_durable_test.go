package agent_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

// A registration acknowledged over the HTTP API is in the data dir when
// the answer arrives, as is a change of its content: the data dir as it is
// then is what a kill -9 right after the answer leaves for the next start.
// Before, a new registration reached the file only 100 ms later (a kill
// in between lost it: test/multihost TestKilledAgentRejoinsFromDataDir
// failed about one run in two), and a changed topic set of a registration
// without TTL never did, so a restart brought the old topics back.
func TestAcknowledgedRegistrationIsDurable(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	addr := c.Agent(0).HTTPAddr()
	saved := filepath.Join(dir, "agent-0")
	for _, topics := range [][]string{{"First"}, {"Second", "Third"}, {"Third"}} {
		if status, _ := call(t, "PUT", addr, "/v1/brokers", brokerReg("durable", "192.0.2.7:10911", topics...), nil); status != 200 {
			t.Fatalf("register %v: status %d", topics, status)
		}
		if got := savedTopics(t, saved); !slices.Equal(got, topics) {
			t.Fatalf("right after registering %v the data dir holds topics %v", topics, got)
		}
	}
}

// savedTopics lists the topics of the queue records a restart from data
// dir dir would restore.
func savedTopics(t *testing.T, dir string) []string {
	t.Helper()
	saved, err := agent.SavedLeases(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var out []string
	for _, recs := range saved {
		for _, r := range recs {
			if r.Queue != nil {
				out = append(out, r.Queue.Topic)
			}
		}
	}
	slices.Sort(out)
	return out
}
