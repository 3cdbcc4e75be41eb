package multihost

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/netns"
)

// TestKilledAgentRejoinsFromDataDir SIGKILLs host 2's agent: every other
// agent must withdraw its routes once failure detection declares it dead.
// Restarted with its data dir but neither --join nor --discover, it must
// find the cluster from its saved member snapshot, come back with a higher
// incarnation and republish the registration it carried (it has no TTL, so
// it lives as long as the agent: package agent/lease) to every peer,
// though it registered just before the kill; a new registration must then
// reach everyone too. Profile fast, to declare the dead sooner.
func TestKilledAgentRejoinsFromDataDir(t *testing.T) {
	t.Parallel()
	lab := netns.New(t, 5)
	bin := netns.BuildBinary(t, namecastPkg)
	dataDirs := make([]string, 5)
	for i := range dataDirs {
		dataDirs[i] = t.TempDir()
	}
	flags := func(i int) []string { return []string{"--profile", "fast", "--data-dir", dataDirs[i]} }
	as := startAgents(t, bin, lab.Hosts(), func(i int) []string { return append(flags(i), "--discover", "prod") })
	waitAlive(t, 30*time.Second, as, names(as))
	registerAll(t, as, "before")
	waitTopics(t, 10*time.Second, as, topicsOf(as, "before")...)
	victim, others := as[1], slices.Delete(slices.Clone(as), 1, 2)
	incBefore := incarnationOf(t, others[0], victim.node)
	// The snapshot is saved at most once a second after membership
	// changes; a crash in that second would lose the last change, and
	// this test is about restarting, not about that second.
	poll(t, 10*time.Second, func() error { return snapshotHolds(dataDirs[1], others) })

	victim.proc.Kill()
	killed := time.Now()
	waitAlive(t, 30*time.Second, others, names(others))
	waitTopics(t, 10*time.Second, others, topicsOf(others, "before")...)
	t.Logf("h2's routes withdrawn everywhere %v after SIGKILL", time.Since(killed).Round(time.Millisecond))

	victim.restart(flags(1)...)
	if err := victim.proc.WaitLog("rejoined the cluster from the data dir's member snapshot", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	waitAlive(t, 30*time.Second, as, names(as))
	if inc := incarnationOf(t, others[0], victim.node); inc <= incBefore {
		t.Errorf("h2 came back with incarnation %d, want more than %d", inc, incBefore)
	}
	// The registration h2 restored from its data dir reaches everyone. It
	// was made just before the kill: its answer came only once it was in
	// the data dir (agent/lease/store.go; before, it reached the file 100 ms
	// later and a kill in between lost it, about one run in two).
	waitTopics(t, 10*time.Second, as, topicsOf(as, "before")...)
	if err := victim.registerBroker(10912, topicOf(victim, "after")); err != nil {
		t.Fatal(err)
	}
	// The new registration replaces the broker's topics.
	waitTopics(t, 10*time.Second, as, append(topicsOf(others, "before"), topicOf(victim, "after"))...)
	for _, a := range as {
		r, err := a.route(topicOf(victim, "after"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := r.BrokerDatas[0].BrokerAddrs["0"], victim.host.Addr()+":10912"; got != want {
			t.Errorf("%s routes %s to %s, want %s", a.node, topicOf(victim, "after"), got, want)
		}
	}
}

// snapshotHolds checks that the member snapshot in dir (agent/snapshot.go's
// members.json) lists the gossip addresses of exactly peers.
func snapshotHolds(dir string, peers []*agent) error {
	b, err := os.ReadFile(filepath.Join(dir, "members.json"))
	if err != nil {
		return err
	}
	var got []string
	if err := json.Unmarshal(b, &got); err != nil {
		return err
	}
	var want []string
	for _, p := range peers {
		want = append(want, p.gossipAddr())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("member snapshot holds %v, want %v", got, want)
	}
	return nil
}

// incarnationOf is node's incarnation as a sees it, from its member tags.
func incarnationOf(t *testing.T, a *agent, node string) uint64 {
	t.Helper()
	ms, err := a.members()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == node {
			inc, err := strconv.ParseUint(m.Tags["inc"], 10, 64)
			if err != nil {
				t.Fatalf("%s's inc tag as %s sees it: %v", node, a.node, err)
			}
			return inc
		}
	}
	t.Fatalf("%s does not know %s", a.node, node)
	return 0
}
