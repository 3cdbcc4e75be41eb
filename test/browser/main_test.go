// Browser tests of the web UI: real agent processes, driven through
// headless Chromium. With NAMECAST_BROWSER=require (set by .ci/run) a
// missing Chromium fails the tests instead of skipping them.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/namecast/namecast/test/browser/harness"
)

var (
	bin      string          // the namecast binary built from this checkout
	browser  context.Context // one Chromium for the whole run; a tab per test
	setupErr error
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "namecast-browser")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if _, err := harness.ChromiumPath(); err != nil {
		setupErr = err
		return m.Run()
	}
	if bin, err = harness.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel, err := harness.Browser(context.Background())
	if err != nil {
		setupErr = err
		return m.Run()
	}
	defer cancel()
	browser = ctx
	return m.Run()
}

// needBrowser skips (or, in CI, fails) a test when Chromium is missing.
func needBrowser(t testing.TB) {
	t.Helper()
	if setupErr == nil {
		return
	}
	if os.Getenv("NAMECAST_BROWSER") == "require" {
		t.Fatalf("NAMECAST_BROWSER=require but the browser is unusable: %v", setupErr)
	}
	if errors.Is(setupErr, harness.ErrNoChromium) {
		t.Skipf("skipping browser test: %v", setupErr)
	}
	t.Fatalf("browser: %v", setupErr)
}

// startCluster runs n agent processes for the test.
func startCluster(t testing.TB, n int, extra func(i int) []string) *harness.Cluster {
	t.Helper()
	c, err := harness.Start(bin, n, extra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, a := range c.Agents {
				t.Logf("log of %s:\n%s", a.Name, a.Log())
			}
		}
		c.Close()
	})
	return c
}

// newTab opens a tab and fails the test if, by its end, the page threw,
// logged an error or opened a dialog.
func newTab(t testing.TB, width, height int64) *harness.Tab {
	t.Helper()
	tab, err := harness.NewTab(browser, width, height)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range tab.Problems() {
			t.Errorf("page problem: %s", p)
		}
		tab.Close()
	})
	return tab
}

// artifactDir is where screenshots go: $NAMECAST_ARTIFACTS, or
// test/browser/artifacts.
func artifactDir(t testing.TB) string {
	dir := os.Getenv("NAMECAST_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	return abs
}
