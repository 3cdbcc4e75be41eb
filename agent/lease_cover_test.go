package agent_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// A lease covers its own records, not every record whose key its key
// begins: a URL withdrawn by its client must not come back after a crash
// because another registration's key (…?v=1) is a prefix of its key
// (…?v=10). The data dir is the one a kill -9 right after the withdrawal
// leaves (Crash saves once more on the way out, so the test puts back the
// file as it was when DELETE answered).
func TestRestartKeepsWithdrawnRecordUnderAnotherLeaseGone(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	addr := c.Agent(0).HTTPAddr()
	const iface = "com.example.Lease"
	short := "dubbo://10.0.0.1:20880/" + iface + "?v=1"
	long := short + "0"
	for _, u := range []string{short, long} {
		if status, _ := call(t, "PUT", addr, "/v1/urls", map[string]string{"url": u}, nil); status != http.StatusOK {
			t.Fatalf("register %s: %d", u, status)
		}
	}
	data := filepath.Join(dir, "agent-0")
	testutil.Eventually(t, 10*time.Second, func() error {
		ids, err := savedLeaseIDs(data)
		if err != nil {
			return err
		}
		if len(ids) != 2 {
			return fmt.Errorf("saved leases %q, want both registrations", ids)
		}
		return nil
	})
	if status, _ := call(t, "DELETE", addr, "/v1/urls?url="+url.QueryEscape(long), nil, nil); status != http.StatusOK {
		t.Fatalf("unregister %s: %d", long, status)
	}
	atDelete := readFiles(t, data, "leases.json", "leases.log")
	c.Crash(0)
	writeFiles(t, data, atDelete)
	c.Restart(0)
	got := urlsOf(t, c.Agent(0).HTTPAddr(), iface)
	if len(got) != 1 || !strings.HasSuffix(got[0], "v=1") {
		t.Fatalf("after the restart %s lists %q, want only %s (the withdrawn %s came back)", iface, got, short, long)
	}
}

// savedLeaseIDs lists the ids of the leases a restart from data dir dir
// would restore.
func savedLeaseIDs(dir string) ([]string, error) {
	saved, err := agent.SavedLeases(dir)
	if err != nil {
		return nil, err
	}
	var ids []string
	for id := range saved {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// readFiles reads the named files of dir, absent ones as nil.
func readFiles(t *testing.T, dir string, names ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

// writeFiles puts back what readFiles read, removing the absent ones.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for n, b := range files {
		p := filepath.Join(dir, n)
		if b == nil {
			_ = os.Remove(p)
			continue
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
