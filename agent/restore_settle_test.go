package agent_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
)

// What a restarted agent restores of its own origin never outranks what
// its peers already hold of it. A URL registered without TTL, then
// withdrawn (acknowledged), on agent 0 of three; agent 0 is killed and
// its disk loses the last entry of leases.log, the withdrawal, whole (cut
// at an entry boundary: nothing on disk says anything is missing). On
// restart its files hold the URL's lease; its peers saw it withdrawn, at
// a later seq of agent 0's previous incarnation than the files were
// written at, whether they still served agent 0's records (a restart
// within failure detection) or had dropped them (declared dead). Before,
// the URL was served again by every agent, for good; now it stays
// withdrawn, and the registration kept beside it stays.
func TestRestoreNeverOutranksTheCluster(t *testing.T) {
	for _, dead := range []bool{false, true} {
		t.Run(fmt.Sprintf("declared-dead=%v", dead), func(t *testing.T) { restoreAfterLostWithdrawal(t, dead) })
	}
}

func restoreAfterLostWithdrawal(t *testing.T, dead bool) {
	dir := t.TempDir()
	c := agenttest.Start(t, 3, agenttest.WithDataDirs(dir))
	const kept = "dubbo://10.9.1.1:20880/com.example.Kept?side=provider"
	const gone = "dubbo://10.9.1.2:20880/com.example.Gone?side=provider"
	for _, u := range []string{kept, gone} {
		if status, _ := call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/urls", map[string]string{"url": u}, nil); status != 200 {
			t.Fatalf("register %s: %d", u, status)
		}
	}
	everywhere(t, c, 10*time.Second, serves(t, "com.example.Gone", 1))
	if status, _ := call(t, "DELETE", c.Agent(0).HTTPAddr(), "/v1/urls?url="+url.QueryEscape(gone), nil, nil); status != 200 {
		t.Fatalf("withdraw: %d", status)
	}
	everywhere(t, c, 10*time.Second, serves(t, "com.example.Gone", 0))

	// kill -9 now: the data dir as the answer left it, then the disk
	// loses the log's last entry.
	data := filepath.Join(dir, "agent-0")
	files := readDir(t, data)
	c.Crash(0) // its shutdown snapshot is replaced by the files as they were
	files["leases.log"] = cutLastEntry(t, files["leases.log"], "drop")
	writeDir(t, data, files)
	if dead {
		everywhere(t, c, 15*time.Second, serves(t, "com.example.Kept", 0))
	}

	c.Restart(0)
	c.WaitMembers(3)
	everywhere(t, c, 10*time.Second, func(addr string) error {
		if err := serves(t, "com.example.Kept", 1)(addr); err != nil {
			return err
		}
		return c.Converged()
	})
	for _, i := range c.Running() {
		if err := serves(t, "com.example.Gone", 0)(c.Agent(i).HTTPAddr()); err != nil {
			t.Errorf("agent-%d: %v: the restart brought back what the cluster saw withdrawn", i, err)
		}
	}
}

// serves checks that an agent serves n providers of iface.
func serves(t *testing.T, iface string, n int) func(string) error {
	return func(addr string) error {
		if u := urlsOf(t, addr, iface); len(u) != n {
			return fmt.Errorf("providers of %s: %v, want %d", iface, u, n)
		}
		return nil
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range es {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func writeDir(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if _, ok := files[e.Name()]; !ok && !e.IsDir() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// cutLastEntry cuts a leases.log (package wal: frames of 4-byte length,
// 4-byte CRC, 8-byte seq, payload; a frame without payload is a mark)
// before its last entry, which must have member field (or its plural:
// a Write saves a lease's removal in "drops").
func cutLastEntry(t *testing.T, b []byte, field string) []byte {
	t.Helper()
	last := -1
	for off := 0; off+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if off+8+n > len(b) {
			break
		}
		if n > 8 {
			last = off
		}
		off += 8 + n
	}
	if last < 0 {
		t.Fatalf("leases.log holds no entry")
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal(b[last+16:], &e); err != nil || e[field] == nil && e[field+"s"] == nil {
		t.Fatalf("the last entry of leases.log is not a %s: %s", field, b[last+16:])
	}
	return b[:last]
}
