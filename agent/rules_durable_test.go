package agent_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// A rule acknowledged through any door (an HTTP persistent URL, a
// RocketMQ KV entry, and their deletes) is in the data dir when the
// answer arrives: what a restart would read then holds it. Before, rules
// reached rules.json at most once a second after the answer, and a kill
// -9 in between lost them (issue 24, item 3).
func TestAcknowledgedRuleIsDurable(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	saved := filepath.Join(dir, "agent-0")
	has := func(key string) bool {
		t.Helper()
		rules, err := agent.SavedRules(saved)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := rules[key]
		return ok
	}
	for i := 1; i <= 5; i++ {
		if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(i)}, nil); status != 200 {
			t.Fatalf("rule %d: status %d", i, status)
		}
		if !has(ruleKey(i)) {
			t.Fatalf("right after rule %d was acknowledged, the data dir lacks it", i)
		}
	}
	if status, _ := call(t, "DELETE", a.HTTPAddr(), "/v1/urls?url="+url.QueryEscape(ruleURL(3)), nil, nil); status != 200 {
		t.Fatalf("delete: status %d", status)
	}
	if has(ruleKey(3)) {
		t.Fatal("right after its delete was acknowledged, the data dir still holds rule 3")
	}
	cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	kv := routes.KVKey("durable", "k")
	resp, err := cl.Do(remoting.PutKVConfig, map[string]string{"namespace": "durable", "key": "k", "value": "v"}, nil)
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("PUT_KV_CONFIG: %v %v", resp, err)
	}
	if !has(kv) {
		t.Fatal("right after PUT_KV_CONFIG was acknowledged, the data dir lacks it")
	}
	resp, err = cl.Do(remoting.DeleteKVConfig, map[string]string{"namespace": "durable", "key": "k"}, nil)
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("DELETE_KV_CONFIG: %v %v", resp, err)
	}
	if has(kv) {
		t.Fatal("right after DELETE_KV_CONFIG was acknowledged, the data dir still holds it")
	}
}

// A rule write that cannot be saved is an error through its door (HTTP
// 503, RocketMQ SYSTEM_ERROR with the reason) and changes nothing: not
// served here, not on disk. A delete that cannot be saved is not
// acknowledged, and the rule stays.
func TestRuleThatCannotBeSavedChangesNothing(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	a := c.Agent(0)
	if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(1)}, nil); status != 200 {
		t.Fatalf("rule 1: status %d", status)
	}
	agent.BreakRulesLog(a)
	var body map[string]string
	if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(2)}, &body); status != 503 || !strings.Contains(body["error"], "data dir") {
		t.Fatalf("unsavable rule: status %d %v, want 503 naming the data dir", status, body)
	}
	if status, _ := call(t, "DELETE", a.HTTPAddr(), "/v1/urls?url="+url.QueryEscape(ruleURL(1)), nil, nil); status != 503 {
		t.Fatalf("unsavable delete: status %d, want 503", status)
	}
	cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := cl.Do(remoting.PutKVConfig, map[string]string{"namespace": "durable", "key": "k", "value": "v"}, nil)
	if err != nil || resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "data dir") {
		t.Fatalf("unsavable PUT_KV_CONFIG: %v %v", resp, err)
	}
	if got := routers(t, a.HTTPAddr()); len(got) != 1 || got[0] != canonRule(1) {
		t.Fatalf("after refused writes the agent serves %q", got)
	}
	if kv := a.Table().KVs("durable"); len(kv) != 0 {
		t.Fatalf("a refused KV write is served: %v", kv)
	}
}

// The rules a door accepts are bounded in all (Config.RulesLimit): past
// it a write answers 507 over HTTP and SYSTEM_ERROR over RocketMQ, naming
// the limit, and a delete still makes room. Before, 20 values of 5 MiB
// made every agent hold 100 MB of rules.
func TestRulesAreBoundedThroughEveryDoor(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.RulesLimit = 16 << 10 })
	a := c.Agent(0)
	cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	big := strings.Repeat("v", 6<<10)
	put := func(k string) *remoting.Command {
		resp, err := cl.Do(remoting.PutKVConfig, map[string]string{"namespace": "bound", "key": k, "value": big}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, k := range []string{"a", "b"} {
		if resp := put(k); resp.Code != remoting.Success {
			t.Fatalf("%s within the bound: %v", k, resp)
		}
	}
	if resp := put("c"); resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "limit") {
		t.Fatalf("KV past the bound: code %d remark %q", resp.Code, resp.Remark)
	}
	var body map[string]string
	long := ruleURL(1) + "&pad=" + strings.Repeat("p", 6<<10)
	if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": long}, &body); status != 507 || !strings.Contains(body["error"], "limit") {
		t.Fatalf("rule past the bound: status %d %v", status, body)
	}
	if kv := a.Table().KVs("bound"); len(kv) != 2 {
		t.Fatalf("held %d KV entries, want the 2 within the bound", len(kv))
	}
	if resp, _ := cl.Do(remoting.DeleteKVConfig, map[string]string{"namespace": "bound", "key": "a"}, nil); resp.Code != remoting.Success {
		t.Fatalf("delete at the bound: %v", resp)
	}
	if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": long}, nil); status != 200 {
		t.Fatalf("rule after a delete made room: status %d", status)
	}
}

// Recovery of rules judges each file on its own and each log line on its
// own: a damaged rules.json does not throw away rules.log, a damaged line
// mid-log does not cut off the lines after it, set-aside copies never
// overwrite each other, and no rules.json.tmp* stays behind.
func TestDamagedRulesFilesLoseOnlyWhatIsDamaged(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	saved := filepath.Join(dir, "agent-0")
	for i := 1; i <= 3; i++ {
		if status, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(i)}, nil); status != 200 {
			t.Fatalf("rule %d: status %d", i, status)
		}
	}
	c.Crash(0)
	logPath := filepath.Join(saved, "rules.log")
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if !strings.Contains(string(b), fmt.Sprintf("rule=r%d", i)) {
			t.Fatalf("rules.log lacks rule %d", i)
		}
	}
	b = []byte(strings.Replace(string(b), "r1", "XX", 1)) // damage the first entry
	if err := os.WriteFile(logPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rules.json", "rules.json.corrupt", "rules.json.tmp123"} {
		if err := os.WriteFile(filepath.Join(saved, name), []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.Restart(0)
	got := routers(t, c.Agent(0).HTTPAddr())
	if len(got) != 2 || got[0] == canonRule(1) {
		t.Fatalf("after damage the agent serves %q, want rules 2 and 3", got)
	}
	for _, name := range []string{"rules.json.corrupt", "rules.json.corrupt.1", "rules.log.corrupt"} {
		if _, err := os.Stat(filepath.Join(saved, name)); err != nil {
			t.Errorf("set-aside copy: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(saved, "rules.json.tmp123")); err == nil {
		t.Error("a stray rules.json.tmp123 stayed behind")
	}
}

// Damage that leaves rules.json valid JSON is found too (the file is
// sealed with a checksum) and the file set aside: before, a changed
// byte of a value was served as the rule, and a changed digit of a
// stamp would win it over every peer's newer write.
func TestRulesSnapshotDamageThatStaysJSONIsFound(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	saved := filepath.Join(dir, "agent-0")
	cl, err := rocketmqtest.Dial(c.Agent(0).Addr("rocketmq"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Do(remoting.PutKVConfig, map[string]string{"namespace": "sealed", "key": "k", "value": "kept-value-1"}, nil)
	cl.Close()
	if err != nil || resp.Code != remoting.Success {
		t.Fatalf("PUT_KV_CONFIG: %v %v", resp, err)
	}
	c.Restart(0) // folds the log into rules.json
	c.Crash(0)
	path := filepath.Join(saved, "rules.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "kept-value-1") {
		t.Fatalf("rules.json lacks the value: %s", b)
	}
	b = []byte(strings.Replace(string(b), "kept-value-1", "kept-value-9", 1))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rules, err := agent.SavedRules(saved)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range rules {
		if j, _ := json.Marshal(r); strings.Contains(string(j), "kept-value-9") {
			t.Fatalf("a restart would serve the damaged value as rule %s: %+v", k, r)
		}
	}
}

// A failed fsync leaves rules.log refusing entries until a snapshot
// rewrites it. The snapshot was taken only when the rules changed, so a
// lone agent (no peer to change them) refused every rule write until it
// was restarted; it must heal by itself once the disk does.
func TestRulesLogHealsAfterAFailedFsync(t *testing.T) {
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(t.TempDir()))
	a := c.Agent(0)
	restore := agent.FailRulesFsync(a)
	status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(1)}, nil)
	restore()
	if status != 503 {
		t.Fatalf("rule whose fsync failed: status %d, want 503", status)
	}
	testutil.Eventually(t, 30*time.Second, func() error {
		var body map[string]string
		if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(2)}, &body); status != 200 {
			return fmt.Errorf("rule after the disk healed: status %d %v", status, body)
		}
		return nil
	})
	if got := routers(t, a.HTTPAddr()); len(got) != 1 || got[0] != canonRule(2) {
		t.Fatalf("the agent serves %q, want only rule 2", got)
	}
}
