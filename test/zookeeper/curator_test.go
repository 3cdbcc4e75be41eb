package zookeeper_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Debian jars DubboFlow.java needs; their manifests name guava,
// jackson and slf4j-api. slf4j-nop keeps ZooKeeper's client logging quiet.
var curatorJars = []string{
	"/usr/share/java/curator-framework.jar", "/usr/share/java/curator-client.jar",
	"/usr/share/java/curator-recipes.jar", "/usr/share/java/curator-x-discovery.jar",
	"/usr/share/java/zookeeper.jar", "/usr/share/java/zookeeper-jute.jar",
	"/usr/share/java/slf4j-nop.jar",
}

var (
	curatorOnce sync.Once
	curatorDir  string
	curatorErr  error
)

// curatorClassPath compiles testdata/curator/DubboFlow.java once per test
// binary and returns the class path that runs it.
func curatorClassPath(t testing.TB) string {
	t.Helper()
	lookPath(t, "javac (Debian openjdk-17-jdk-headless)", "javac")
	for _, j := range curatorJars {
		needFile(t, "Curator 5.4 / ZooKeeper jars (Debian libcurator-framework-java, libcurator-recipes-java, libcurator-discovery-java, libzookeeper-java, libslf4j-java)", j)
	}
	cp := strings.Join(curatorJars, ":")
	curatorOnce.Do(func() {
		curatorDir, curatorErr = os.MkdirTemp("", "namecast-curator-")
		if curatorErr != nil {
			return
		}
		out, err := exec.Command("javac", "-nowarn", "-cp", cp, "-d", curatorDir, filepath.Join("testdata", "curator", "DubboFlow.java")).CombinedOutput()
		if err != nil {
			curatorErr = errorf("javac DubboFlow.java: %v\n%s", err, out)
		}
	})
	if curatorErr != nil {
		t.Fatal(curatorErr)
	}
	return curatorDir + ":" + cp
}

// runDubboFlow runs the Curator program with its provider on providerAddr
// and its consumer on consumerAddr, and fails t with the program's output
// unless every step passed.
func runDubboFlow(t *testing.T, providerAddr, consumerAddr string) {
	cp := curatorClassPath(t)
	start := time.Now()
	cmd := exec.Command("java", "-Xmx256m", "-cp", cp, "DubboFlow", providerAddr, consumerAddr)
	out, err := cmd.CombinedOutput()
	t.Logf("Curator DubboFlow (provider on %s, consumer on %s), %v:\n%s", providerAddr, consumerAddr, time.Since(start).Round(time.Millisecond), out)
	if err != nil || !strings.Contains(string(out), "\nDONE\n") {
		t.Fatalf("DubboFlow failed: %v", err)
	}
}

// The program itself, against the real ZooKeeper: both sides on the one
// server. This is what makes its expectations ZooKeeper's, not ours.
func TestCuratorDubboFlowRealZooKeeper(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	runDubboFlow(t, z.Addr, z.Addr)
}
