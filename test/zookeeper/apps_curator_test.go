package zookeeper_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/internal/testutil"
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
	t.Parallel()
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

// An instance registered over HTTP (agent.RegisterInstance, behind
// PUT /v1/apps/{app}/instances) on agent A is, for Curator on agent B, the
// instance Curator would have written: the program reads it and its
// ServiceCache lists it exactly as when the same bytes are an ephemeral
// znode of the real ZooKeeper. Its mapping and metadata nodes name it, and
// unregistering it removes it from B.
func TestCuratorReadsInstanceRegisteredOverHTTP(t *testing.T) {
	t.Parallel()
	// Compiled before the registration, whose TTL must not run while this
	// waits for another test's javac.
	appsClassPath(t)
	c, addrs := zkAgents(t, 2)
	const iface = "org.apache.dubbo.demo.DemoService"
	in, err := agent.Door[*httpapi.Server](c.Agent(0)).RegisterInstance(httpapi.InstanceRegistration{App: "demo-provider", Address: "10.0.0.7", Port: 20880,
		Interfaces: []string{iface}}, 10*time.Minute) // outlives two JVM runs and a ZooKeeper start on a loaded machine
	if err != nil {
		t.Fatal(err)
	}
	got := runAppDiscovery(t, addrs[1], addrs[1], in.ID)

	b := dialZK(t, addrs[1])
	path := "/services/demo-provider/" + in.ID
	data, st, err := b.Get(path)
	if err != nil || st.EphemeralOwner == 0 {
		t.Fatalf("agent B's %s: %v, ephemeralOwner %d", path, err, st.EphemeralOwner)
	}
	// The mapping and metadata are rules, gossiped apart from the instance.
	testutil.Eventually(t, 10*time.Second, func() error {
		m, _, err := b.Get("/dubbo/mapping/" + iface)
		if err != nil || string(m) != "demo-provider" {
			return errorf("agent B's mapping of %s: %q %v", iface, m, err)
		}
		for _, p := range []string{"/dubbo/metadata/demo-provider/" + in.Revision, "/dubbo/demo-provider/" + in.Revision} {
			meta, _, err := b.Get(p)
			if err != nil || !strings.Contains(string(meta), `"name":"`+iface+`"`) {
				return errorf("agent B's %s: %s %v", p, meta, err)
			}
		}
		return nil
	})

	// The reference: the same bytes as an ephemeral znode of ZooKeeper 3.8.
	z := startRealZK(t)
	r := dialZK(t, z.Addr)
	for _, p := range []string{"/services", "/services/demo-provider"} {
		if _, err := r.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Create(path, data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	ref := runAppDiscovery(t, z.Addr, z.Addr, in.ID)
	if len(ref) == 0 || strings.Join(ref, "\n") != strings.Join(got, "\n") {
		t.Fatalf("Curator read the HTTP instance differently from the same bytes on ZooKeeper 3.8:\n%s", lineDiff(strings.Join(ref, "\n"), strings.Join(got, "\n")))
	}

	if ok, err := agent.Door[*httpapi.Server](c.Agent(0)).UnregisterInstance("demo-provider", in.ID); !ok || err != nil {
		t.Fatalf("unregister: %v %v", ok, err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if ok, _, err := b.Exists(path); ok || err != nil {
			return errorf("agent B still has %s (%v)", path, err)
		}
		return nil
	})
}

func dialZK(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(quietLog{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
