// Package harness runs what the browser tests and the screenshot program
// look at: a cluster of real `namecast agent` processes on loopback, built
// from this checkout, and a headless Chromium that records every console
// error, uncaught exception and dialog of its tabs.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RepoRoot is the namecast checkout this module lives in.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Build compiles cmd/namecast into dir and returns the binary's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "namecast")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/namecast")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/namecast: %v\n%s", err, out)
	}
	return bin, nil
}

// Agent is one agent process.
type Agent struct {
	Name   string
	HTTP   string // host:port of the HTTP API
	Gossip string // host:port of gossip
	UI     string // the UI address the agent printed at start
	args   []string
	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
}

// Cluster is a set of agent processes joined into one cluster.
type Cluster struct {
	bin    string
	label  string
	Agents []*Agent
}

// Start runs n agents (agent-1 … agent-n), each joining the first; extra
// gives more flags for agent i (1-based).
func Start(bin string, n int, extra func(i int) []string) (*Cluster, error) {
	c := &Cluster{bin: bin, label: "ui-" + strconv.FormatUint(rand.Uint64(), 36)}
	for i := 1; i <= n; i++ {
		args := []string{"agent", "--node", fmt.Sprintf("agent-%d", i), "--bind", "127.0.0.1:0", "--http", "127.0.0.1:0",
			"--rocketmq", "off", "--zookeeper", "off", "--nacos", "off", "--consul", "off", "--dns", "off", "--profile", "fast", "--cluster", c.label, "--log-level", "info"}
		if i > 1 {
			args = append(args, "--join", c.Agents[0].Gossip)
		}
		if extra != nil {
			args = append(args, extra(i)...)
		}
		a := &Agent{Name: fmt.Sprintf("agent-%d", i), args: args}
		if err := c.run(a); err != nil {
			c.Close()
			return nil, err
		}
		c.Agents = append(c.Agents, a)
	}
	return c, c.WaitMembers(n, 30*time.Second)
}

var (
	startedRe = regexp.MustCompile(`msg="agent started".* gossip=(\S+) http=(\S+)`)
	uiRe      = regexp.MustCompile(`msg="web UI".* url=(\S+)`)
)

// run starts a's process and waits for the log line saying where it
// listens.
func (c *Cluster) run(a *Agent) error {
	cmd := exec.Command(c.bin, a.args...)
	dieWithParent(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	a.cmd, a.done = cmd, make(chan struct{})
	started := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			a.mu.Lock()
			a.log.WriteString(line + "\n")
			if m := uiRe.FindStringSubmatch(line); m != nil {
				a.UI = m[1]
			}
			a.mu.Unlock()
			if m := startedRe.FindStringSubmatch(line); m != nil {
				started <- [2]string{m[1], m[2]}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(a.done)
	}()
	select {
	case addrs := <-started:
		a.Gossip, a.HTTP = addrs[0], addrs[1]
		a.mu.Lock()
		ui := a.UI
		a.mu.Unlock()
		// The UI's address is printed at start, where a user looks first.
		if want := "http://" + a.HTTP + "/ui/"; ui != want {
			_ = cmd.Process.Kill()
			return fmt.Errorf("%s printed the web UI at %q at start, want %q:\n%s", a.Name, ui, want, a.Log())
		}
		return nil
	case <-a.done:
		return fmt.Errorf("%s exited at start:\n%s", a.Name, a.Log())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return fmt.Errorf("%s did not start in 30 s:\n%s", a.Name, a.Log())
	}
}

// Log is what the agent wrote to stderr so far.
func (a *Agent) Log() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log.String()
}

// URL is the agent's address for path, e.g. URL("/ui/members").
func (a *Agent) URL(path string) string { return "http://" + a.HTTP + path }

// Kill sends SIGKILL to agent i (1-based) and waits for it to exit.
func (c *Cluster) Kill(i int) {
	a := c.Agents[i-1]
	if a.cmd != nil && a.cmd.Process != nil {
		_ = a.cmd.Process.Signal(syscall.SIGKILL)
		<-a.done
	}
}

// Restart starts agent i again on the same HTTP address, joined to another
// running agent.
func (c *Cluster) Restart(i int) error {
	a := c.Agents[i-1]
	args := []string{}
	for j := 0; j < len(a.args); j++ {
		if a.args[j] == "--http" || a.args[j] == "--join" {
			j++
			continue
		}
		args = append(args, a.args[j])
	}
	args = append(args, "--http", a.HTTP)
	for j, o := range c.Agents {
		if j != i-1 {
			args = append(args, "--join", o.Gossip)
			break
		}
	}
	na := &Agent{Name: a.Name, args: args}
	if err := c.run(na); err != nil {
		return err
	}
	c.Agents[i-1] = na
	return nil
}

// Close kills every agent still running.
func (c *Cluster) Close() {
	for i := range c.Agents {
		c.Kill(i + 1)
	}
}

// WaitMembers waits until every running agent counts n alive members.
func (c *Cluster) WaitMembers(n int, timeout time.Duration) error {
	return Eventually(timeout, func() error {
		for _, a := range c.Agents {
			select {
			case <-a.done:
				continue
			default:
			}
			var h struct{ Members int }
			if err := a.Get("/v1/health", &h); err != nil {
				return err
			}
			if h.Members != n {
				return fmt.Errorf("%s sees %d members, want %d", a.Name, h.Members, n)
			}
		}
		return nil
	})
}

// Eventually retries f until it returns nil or timeout passes, returning
// its last error.
func Eventually(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var client = &http.Client{Timeout: 10 * time.Second}

// Get reads an API path into v.
func (a *Agent) Get(path string, v any) error {
	res, err := client.Get(a.URL(path))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("GET %s on %s: %s %s", path, a.Name, res.Status, b)
	}
	return json.NewDecoder(res.Body).Decode(v)
}

// Put writes body as JSON with method PUT, as the CLI does.
func (a *Agent) Put(path string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, a.URL(path), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s on %s: %s %s", path, a.Name, res.Status, strings.TrimSpace(string(out)))
	}
	return nil
}

// Broker is a registration body for PUT /v1/brokers.
func Broker(cluster, name string, id int, addr string, topics ...string) map[string]any {
	ts := map[string]any{}
	if id == 0 {
		for _, t := range topics {
			ts[t] = map[string]int{"readQueueNums": 4, "writeQueueNums": 4, "perm": 6}
		}
	}
	return map[string]any{"cluster": cluster, "brokerName": name, "brokerId": id, "addr": addr, "topics": ts}
}

// URL is a body for PUT /v1/urls.
func URL(u string) map[string]any { return map[string]any{"url": u} }
