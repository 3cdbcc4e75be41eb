package zookeeper_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kazooPython is Debian's interpreter, which has python3-kazoo; the
// python3 first on PATH may be another one without it.
const kazooPython = "/usr/bin/python3"

// runKazooFlow runs testdata/kazoo/dubbo_flow.py with its provider on
// providerAddr and its consumer on consumerAddr.
func runKazooFlow(t *testing.T, providerAddr, consumerAddr string) {
	needFile(t, "python3 (Debian python3)", kazooPython)
	if out, err := exec.Command(kazooPython, "-c", "import kazoo").CombinedOutput(); err != nil {
		needHost(t, "kazoo (Debian python3-kazoo)", errorf("%v: %s", err, out))
	}
	start := time.Now()
	out, err := exec.Command(kazooPython, filepath.Join("testdata", "kazoo", "dubbo_flow.py"), providerAddr, consumerAddr).CombinedOutput()
	t.Logf("kazoo dubbo_flow.py (provider on %s, consumer on %s), %v:\n%s", providerAddr, consumerAddr, time.Since(start).Round(time.Millisecond), out)
	if err != nil || !strings.Contains(string(out), "\nDONE\n") {
		t.Fatalf("dubbo_flow.py failed: %v", err)
	}
}

// The script against the real ZooKeeper, which makes its expectations
// ZooKeeper's.
func TestKazooDubboFlowRealZooKeeper(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	runKazooFlow(t, z.Addr, z.Addr)
}
