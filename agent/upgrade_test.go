package agent_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

var updateDataDir = flag.Bool("update-datadir", false, "write testdata/datadir-VERSION: the data dir this release leaves, for the next releases to read")

// releaseVersion is the repository's VERSION file.
func releaseVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// An agent reads the data dir an agent of an earlier release left
// (testdata/datadir-VERSION, one per release since 0.1.0; docs/upgrading.md):
// the broker registration and the rule it held come back, served at once.
// With -update-datadir the current release's is written (then commit it).
func TestDataDirOfEarlierReleases(t *testing.T) {
	if *updateDataDir {
		writeReleaseDataDir(t, filepath.Join("testdata", "datadir-"+releaseVersion(t)))
	}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "datadir-*"))
	if len(dirs) == 0 {
		t.Fatal("no testdata/datadir-*: run go test -run TestDataDirOfEarlierReleases -update-datadir ./agent")
	}
	for _, saved := range dirs {
		t.Run(filepath.Base(saved), func(t *testing.T) {
			root := t.TempDir()
			if out, err := exec.Command("cp", "-a", saved, filepath.Join(root, "agent-0")).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			c := agenttest.Start(t, 1, agenttest.WithDataDirs(root))
			rules, err := agent.SavedRules(filepath.Join(root, "agent-0"))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := rules[ruleKey(1)]; !ok {
				t.Errorf("the rule of %s is gone: %v", saved, rules)
			}
			everywhere(t, c, 10*time.Second, wantRoute(t, "UpgradeTopic", "192.0.2.9:10911"))
		})
	}
}

// writeReleaseDataDir runs an agent that holds a broker registration and a
// rule, stops it for a restart, and copies its data dir to dst.
func writeReleaseDataDir(t *testing.T, dst string) {
	root := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(root))
	a := c.Agent(0)
	if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/brokers", brokerReg("upgrade", "192.0.2.9:10911", "UpgradeTopic"), nil); status != 200 {
		t.Fatalf("register: status %d", status)
	}
	if status, _ := call(t, "PUT", a.HTTPAddr(), "/v1/urls", map[string]string{"url": ruleURL(1)}, nil); status != 200 {
		t.Fatalf("rule: status %d", status)
	}
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dst)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(root, "agent-0"), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.Remove(filepath.Join(dst, "LOCK")) // the lock of a process long gone
	t.Logf("wrote %s", dst)
}
