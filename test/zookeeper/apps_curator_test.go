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

// Dubbo 3's application-level discovery on Curator 5.4's curator-x-discovery
// (testdata/curator-apps/AppDiscovery.java): the same program against the
// real ZooKeeper and against two agents must print the same transcript:
// the same instances, data and ServiceCache states.

var (
	appsOnce sync.Once
	appsDir  string
	appsErr  error
)

// appsClassPath compiles AppDiscovery.java and its payload class once per
// test binary and returns the class path that runs it.
func appsClassPath(t testing.TB) string {
	t.Helper()
	curatorClassPath(t) // checks javac and the jars
	jars := strings.Join(append(append([]string{}, curatorJars...),
		"/usr/share/java/jackson-databind.jar", "/usr/share/java/jackson-core.jar", "/usr/share/java/jackson-annotations.jar"), ":")
	for _, j := range []string{"/usr/share/java/jackson-databind.jar", "/usr/share/java/jackson-core.jar"} {
		needFile(t, "Jackson (Debian libjackson2-databind-java, a dependency of libcurator-discovery-java)", j)
	}
	appsOnce.Do(func() {
		appsDir, appsErr = os.MkdirTemp("", "namecast-curator-apps-")
		if appsErr != nil {
			return
		}
		src := filepath.Join("testdata", "curator-apps")
		out, err := exec.Command("javac", "-nowarn", "-cp", jars, "-d", appsDir,
			filepath.Join(src, "AppDiscovery.java"),
			filepath.Join(src, "org", "apache", "dubbo", "registry", "zookeeper", "ZookeeperInstance.java")).CombinedOutput()
		if err != nil {
			appsErr = errorf("javac AppDiscovery.java: %v\n%s", err, out)
		}
	})
	if appsErr != nil {
		t.Fatal(appsErr)
	}
	return appsDir + ":" + jars
}

// runAppDiscovery runs the program and returns its transcript lines ("T ").
func runAppDiscovery(t *testing.T, providerAddr, consumerAddr string, extra ...string) []string {
	t.Helper()
	cp := appsClassPath(t)
	start := time.Now()
	out, err := exec.Command("java", append([]string{"-Xmx256m", "-cp", cp, "AppDiscovery", providerAddr, consumerAddr}, extra...)...).CombinedOutput()
	t.Logf("Curator AppDiscovery (provider on %s, consumer on %s), %v:\n%s", providerAddr, consumerAddr, time.Since(start).Round(time.Millisecond), out)
	if err != nil || !strings.Contains(string(out), "\nDONE\n") {
		t.Fatalf("AppDiscovery failed: %v", err)
	}
	var tr []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "T ") {
			tr = append(tr, l)
		}
	}
	return tr
}

// Differential: the program against the real ZooKeeper 3.8, then with its
// provider on agent A and its consumer on agent B; the transcripts match
// line for line.
func TestCuratorAppDiscoveryDifferential(t *testing.T) {
	z := startRealZK(t)
	ref := runAppDiscovery(t, z.Addr, z.Addr)
	_, addrs := zkAgents(t, 2)
	got := runAppDiscovery(t, addrs[0], addrs[1])
	if len(ref) < 10 {
		t.Fatalf("the reference transcript is too short to mean anything:\n%s", strings.Join(ref, "\n"))
	}
	if strings.Join(ref, "\n") != strings.Join(got, "\n") {
		t.Fatalf("the agents answered AppDiscovery differently from ZooKeeper 3.8:\n%s", lineDiff(strings.Join(ref, "\n"), strings.Join(got, "\n")))
	}
}
