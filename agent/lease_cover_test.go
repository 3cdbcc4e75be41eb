package agent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	file := filepath.Join(dir, "agent-0", "leases.json")
	testutil.Eventually(t, 10*time.Second, func() error {
		ids, err := savedLeaseIDs(file)
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
	atDelete, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c.Crash(0)
	if err := os.WriteFile(file, atDelete, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Restart(0)
	got := urlsOf(t, c.Agent(0).HTTPAddr(), iface)
	if len(got) != 1 || !strings.HasSuffix(got[0], "v=1") {
		t.Fatalf("after the restart %s lists %q, want only %s (the withdrawn %s came back)", iface, got, short, long)
	}
}

// savedLeaseIDs lists the ids of the leases in a leases.json.
func savedLeaseIDs(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var body struct {
		Leases []struct {
			ID string `json:"id"`
		} `json:"leases"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	var ids []string
	for _, l := range body.Leases {
		ids = append(ids, l.ID)
	}
	slices.Sort(ids)
	return ids, nil
}
