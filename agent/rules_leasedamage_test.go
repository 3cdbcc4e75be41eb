package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
)

// Damage to the lease files touches no rule: a garbled leases.json is
// set aside alone, and the KV entries (rules.json, rules.log) all come
// back. (Checked for the crash test, which lost an acknowledged
// PUT_KV_CONFIG in a round that had damaged a leases.json.)
func TestDamagedLeaseSnapshotLeavesRulesAlone(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	saved := filepath.Join(dir, "agent-0")
	put := func(key, value string) {
		t.Helper()
		cl, err := rocketmqtest.Dial(c.Agent(0).Addr("rocketmq"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		resp, err := cl.Do(remoting.PutKVConfig, map[string]string{"namespace": "dmg", "key": key, "value": value}, nil)
		if err != nil || resp.Code != remoting.Success {
			t.Fatalf("PUT_KV_CONFIG %s: %v %v", key, resp, err)
		}
	}
	put("a", "1")
	put("b", "2")
	c.Crash(0)
	path := filepath.Join(saved, "leases.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	a := c.Restart(0)
	if got := a.Table().KVs("dmg"); got["a"] != "1" || got["b"] != "2" {
		t.Fatalf("after damage to leases.json the agent holds KV %v, want a=1 b=2", got)
	}
	for _, name := range []string{"rules.json.corrupt", "rules.log.corrupt"} {
		if _, err := os.Stat(filepath.Join(saved, name)); err == nil {
			t.Errorf("%s set aside after damage to leases.json only", name)
		}
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Errorf("the damaged leases.json is not set aside: %v", err)
	}
}
