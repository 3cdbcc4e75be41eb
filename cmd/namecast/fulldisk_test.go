package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size bytes at dir in a mount namespace of
// its own, held by a sleeping process, and returns that process's pid
// (its namespace's files are under /proc/PID/root). It skips where mount
// namespaces cannot be made, unless NAMECAST_NETNS=require (CI).
func smallDisk(t *testing.T, dir string, size int) int {
	t.Helper()
	pid, err := smallDisks(t, size, dir)
	if err != nil {
		if os.Getenv("NAMECAST_NETNS") == "require" {
			t.Fatal(err)
		}
		t.Skipf("%v; set NAMECAST_NETNS=require to fail instead", err)
	}
	return pid
}

// smallDisks mounts a tmpfs of size bytes at each of dirs in one mount
// namespace of its own, held by a sleeping process until the test ends,
// and returns that process's pid; an error where that is not permitted.
func smallDisks(t *testing.T, size int, dirs ...string) (int, error) {
	t.Helper()
	script := ""
	for _, dir := range dirs {
		script += "mount -t tmpfs -o size=" + strconv.Itoa(size) + " tmpfs '" + dir + "' && "
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script+"echo ready && exec sleep 3600")
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	var line string
	if err == nil {
		line, err = bufio.NewReader(out).ReadString('\n')
	}
	if err != nil || strings.TrimSpace(line) != "ready" {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return 0, fmt.Errorf("cannot mount a small tmpfs in a mount namespace of its own (%v): unshare(1), root or CAP_SYS_ADMIN needed", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid, nil
}

// fill writes into the namespace's tmpfs until it is full; remove frees it.
func fill(t *testing.T, path string) (remove func()) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 512)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// A full disk never makes the agent lie: with its data dir on a tmpfs
// that fills, every registration, withdrawal and rule answered 200 is
// what a kill -9 and restart (space freed) brings back, every one refused
// (503/507) changed nothing, and a withdrawal refused then succeeds once
// space is back. Before (issue 24, item 1), on a 256 KiB tmpfs, 30
// DELETEs and 30 PUTs all answered 200, and after the restart 11 deleted
// URLs were served again and the 30 new ones were gone.
func TestFullDiskNeverLiesAboutWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	holder := smallDisk(t, dir, 1<<20)
	inNS := "/proc/" + strconv.Itoa(holder) + "/root" + dir
	p := &proc{t: t, name: "full", dataDir: dir, label: "full-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		gossip: freeAddr(t), http: freeAddr(t), rmq: freeAddr(t), zk: freeAddr(t), log: newSyncBuffer(),
		wrap: []string{"nsenter", "-t", strconv.Itoa(holder), "-m", "--"}}
	p.start()
	t.Cleanup(func() {
		p.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("log of %s:\n%s", p.name, p.log.String())
		}
	})
	waitUntil(t, 20*time.Second, p.healthy)

	u := func(i int) string { return fmt.Sprintf("dubbo://10.78.0.%d:20880/com.example.Full", i) }
	hc := &http.Client{Timeout: 10 * time.Second}
	put := func(raw string) int {
		body, _ := json.Marshal(map[string]string{"url": raw})
		req, _ := http.NewRequest("PUT", "http://"+p.http+"/v1/urls", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	del := func(raw string) int {
		req, _ := http.NewRequest("DELETE", "http://"+p.http+"/v1/urls?url="+url.QueryEscape(raw), nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	served := func() []string {
		resp, err := hc.Get("http://" + p.http + "/v1/services/com.example.Full")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			URLs []string `json:"urls"`
		}
		json.NewDecoder(resp.Body).Decode(&out)
		slices.Sort(out.URLs)
		return out.URLs
	}
	want := map[string]bool{}
	for i := 1; i <= 30; i++ {
		if code := put(u(i)); code != 200 {
			t.Fatalf("register %d with room: %d", i, code)
		}
		want[u(i)] = true
	}
	free := fill(t, filepath.Join(inNS, "filler"))
	refused := 0
	for i := 1; i <= 30; i++ {
		switch code := del(u(i)); code {
		case 200:
			delete(want, u(i))
		case 503:
			refused++
		default:
			t.Fatalf("withdraw %d on a full disk: %d", i, code)
		}
		switch code := put(u(100 + i)); code {
		case 200:
			want[u(100+i)] = true
		case 503:
			refused++
		default:
			t.Fatalf("register %d on a full disk: %d", 100+i, code)
		}
	}
	check := func(when string) {
		t.Helper()
		var exp []string
		for k := range want {
			exp = append(exp, k)
		}
		slices.Sort(exp)
		if got := served(); !slices.Equal(got, exp) {
			t.Fatalf("%s: serves %d URLs %q, want the %d acknowledged %q", when, len(got), got, len(exp), exp)
		}
	}
	check("on the full disk")
	p.stop(syscall.SIGKILL)
	free()
	p.start()
	waitUntil(t, 20*time.Second, p.healthy)
	check("after kill -9 and restart")
	if refused == 0 {
		t.Fatal("nothing was refused: the disk was not full")
	}
	for i := 1; i <= 30; i++ {
		if want[u(i)] {
			if code := del(u(i)); code != 200 {
				t.Fatalf("withdraw %d with room again: %d", i, code)
			}
			delete(want, u(i))
		}
	}
	p.stop(syscall.SIGKILL)
	p.start()
	waitUntil(t, 20*time.Second, p.healthy)
	check("after the withdrawals refused before went through, kill -9 and restart")
	t.Logf("on the full disk: %d of 60 changes refused, %d acknowledged; after two kill -9s none lost, none resurrected", refused, 60-refused)
}
