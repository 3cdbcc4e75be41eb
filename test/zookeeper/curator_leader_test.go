package zookeeper_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// packetsReceived is the agent's zk_packets_received (mntr).
func packetsReceived(t *testing.T, addr string) int {
	t.Helper()
	out, err := fourLetter(addr, "mntr")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "zk_packets_received\t"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no zk_packets_received in mntr:\n%s", out)
	return 0
}

// Curator's LeaderSelector with autoRequeue cannot work through the door
// (it needs sequential nodes), and must not spin (issue 41 item 6: 36,962
// refused creates in 5 s): over 5 s it gets one refusal a second.
func TestCuratorLeaderSelectorDoesNotSpin(t *testing.T) {
	t.Parallel()
	cp := curatorClassPath(t)
	dir := t.TempDir()
	if out, err := exec.Command("javac", "-nowarn", "-cp", cp, "-d", dir, filepath.Join("testdata", "curator-leader", "LeaderSpin.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac LeaderSpin.java: %v\n%s", err, out)
	}
	_, addrs := zkAgents(t, 1)
	before := packetsReceived(t, addrs[0])
	start := time.Now()
	cmd := exec.Command("java", "-Xmx256m", "-cp", dir+":"+cp, "LeaderSpin", addrs[0], "5")
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start)
	if err != nil || !strings.Contains(string(out), "DONE") {
		t.Fatalf("LeaderSpin failed: %v\n%s", err, out)
	}
	n := packetsReceived(t, addrs[0]) - before
	t.Logf("LeaderSelector for 5 s (%v with the JVM): %d requests reached the agent", elapsed.Round(time.Millisecond), n)
	if strings.Contains(string(out), "LEADER") {
		t.Fatalf("the recipe took leadership through a door that cannot mint sequential names:\n%s", out)
	}
	if n > 100 {
		t.Fatalf("%d requests in 5 s: the recipe spins", n)
	}
}
