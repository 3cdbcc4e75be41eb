package agent

import (
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// Rule writes are stamped in the order they reach the agent, also while
// they wait for its first sync with the cluster: were each write to wait
// on its own (up to ruleSyncWait, 5 s: as long as RocketMQ clients wait
// for an answer), a delete whose client had given up waiting, and then
// put a new value on another connection, could see the agent ready a
// moment after the put did, be stamped after it, and remove the
// acknowledged value: last writer wins by stamp.
func TestRuleWriteWaitingForSyncIsNeverStampedAfterALaterOne(t *testing.T) {
	a := startLone(t, func(cfg *Config) { cfg.RetryJoin = []string{"nowhere"} })
	if a.Ready() {
		t.Fatal("an agent that expects peers it cannot reach is ready")
	}
	kv := func(v string) []routes.Record {
		return []routes.Record{{KV: &routes.KV{Namespace: "order", Key: "k", Value: v}}}
	}
	key := routes.KVKey("order", "k")
	a.readiness.ready.Store(true)
	if _, err := a.rules.apply(kv("v1"), nil); err != nil {
		t.Fatal(err)
	}
	a.readiness.ready.Store(false) // its first sync is under way again

	deleted := make(chan error, 1)
	go func() { // the write whose client gives up waiting
		_, err := a.rules.apply(nil, []string{key})
		deleted <- err
	}()
	waitingForSync(t, a)
	a.readiness.ready.Store(true) // synced, as the client's next write arrives
	if _, err := a.rules.apply(kv("v2"), nil); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if got, ok := a.table.KVs("order")["k"]; !ok || got != "v2" {
		t.Fatalf("after the delete that came first and the put that came next, k is %q (present %v), want v2", got, ok)
	}
}

// waitingForSync returns once a rule write waits for the agent's first
// sync (holding the others back).
func waitingForSync(t *testing.T, a *Agent) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.rules.order.TryLock() {
		a.rules.order.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("no rule write waits for the first sync")
		}
		time.Sleep(time.Millisecond)
	}
}
