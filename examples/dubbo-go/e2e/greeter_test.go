// Package e2e runs the dubbo-go example as two hosts would: a provider and
// a consumer process, each pointed at a different namecast agent's
// ZooKeeper port or Nacos door (nacos_test.go), or one at each. It builds
// the example with `go build`; it imports none of dubbo-go itself.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// The example end to end, as two hosts would run it: the provider's
// registry is agent A's ZooKeeper port, the consumer's is agent B's.
//
//  1. The consumer on B calls the provider registered through A.
//  2. Stopping the provider (SIGTERM: dubbo-go unregisters) empties the
//     consumer's directory: its calls fail with no provider.
//  3. A provider killed with -9 (no unregister, no closeSession: only its
//     TCP connection closes) is gone from every agent within the agent's
//     --zookeeper-grace + 1 s.
func TestGreeterAcrossAgents(t *testing.T) {
	reg := startRegistries(t)
	bin := buildExample(t)
	watch := dialAll(t, reg.all)

	p := startProcess(t, bin, "provider", reg.a, "-role", "provider", "-port", fmt.Sprint(freePort(t)))
	testutil.Eventually(t, 60*time.Second, watch.instances(1)) // on every agent
	c := startProcess(t, bin, "consumer", reg.b, "-role", "consumer", "-name", "namecast", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello namecast, from 127.0.0.1:")
	t.Logf("consumer via %s called the provider registered via %s", reg.b, reg.a)

	p.signal(t, syscall.SIGTERM)
	testutil.Eventually(t, 30*time.Second, watch.instances(0))
	c.waitLine(t, 30*time.Second, "CALL error")
	t.Logf("provider stopped: the consumer's directory is empty")

	p2 := startProcess(t, bin, "provider-2", reg.a, "-role", "provider", "-port", fmt.Sprint(freePort(t)))
	testutil.Eventually(t, 60*time.Second, watch.instances(1))
	c.waitLine(t, 60*time.Second, "CALL ok hello namecast")
	p2.signal(t, syscall.SIGKILL)
	gone := watch.goneEverywhere(t, 60*time.Second)
	t.Logf("provider killed -9: gone from %s after %v", strings.Join(reg.all, ", "), gone.Round(time.Millisecond))
	if reg.grace > 0 && gone > reg.grace+time.Second {
		t.Errorf("killed provider gone from every agent after %v, want <= grace %v + 1s", gone, reg.grace)
	}
	c.waitLine(t, 30*time.Second, "CALL error")
}

// buildExample builds the example program, once per test binary. It is
// built without -race: the provider and consumer are dubbo-go's code, whose
// race build alone would cost CI minutes; the agents and this test run
// under -race.
func buildExample(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "namecast-dubbo-go-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "greeter"), ".")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build examples/dubbo-go: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "greeter")
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if cliBin != "" {
		os.RemoveAll(filepath.Dir(cliBin))
	}
	os.Exit(code)
}
