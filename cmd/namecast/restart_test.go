package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// agentChildEnv makes the test binary act as `namecast agent` (the
// arguments, separated by US (0x1f)), so restart tests run real processes that can
// be sent SIGTERM or SIGKILL without building the binary first.
const agentChildEnv = "NAMECAST_TEST_AGENT_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(agentChildEnv); args != "" {
		os.Exit(runAgent(strings.Split(args, "\x1f")))
	}
	os.Exit(m.Run())
}

// proc is one agent process on loopback with fixed ports, so a restart is
// the same host coming back.
type proc struct {
	t                    *testing.T
	name, dataDir, label string
	gossip, http, rmq    string
	zk                   string
	join                 string
	cmd                  *exec.Cmd
	log                  *syncBuffer
	exited               chan struct{}
	// wrap runs the agent under another command (nsenter into a mount
	// namespace holding its data dir), which must exec it in place.
	wrap []string
}

// freeAddr reserves a loopback port by binding it; the agent binds it again
// at once (and again after a restart).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Gossip needs the UDP port free too.
	addr := ln.Addr().String()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return freeAddr(t)
	}
	pc.Close()
	return addr
}

func (p *proc) start() {
	p.t.Helper()
	args := []string{"--node", p.name, "--bind", p.gossip, "--http", p.http, "--rocketmq", p.rmq,
		"--zookeeper", p.zk, "--nacos", "off", "--consul", "off", "--dns", "off", "--cluster", p.label, "--data-dir", p.dataDir, "--log-level", "debug"}
	if p.join != "" {
		args = append(args, "--join", p.join)
	}
	exe, err := os.Executable()
	if err != nil {
		p.t.Fatal(err)
	}
	argv := append(append([]string{}, p.wrap...), exe, "-test.run=^$")
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(os.Environ(), agentChildEnv+"="+strings.Join(args, "\x1f"))
	p.cmd.Stderr = p.log
	p.cmd.Stdout = p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	exited := make(chan struct{})
	p.exited = exited
	go func(c *exec.Cmd) { _ = c.Wait(); close(exited) }(p.cmd)
}

func (p *proc) stop(sig syscall.Signal) {
	p.t.Helper()
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.t.Fatalf("%s did not exit within 30 s of %v", p.name, sig)
	}
}

func startProcs(t *testing.T, n int) []*proc {
	label := "restart-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var ps []*proc
	for i := 0; i < n; i++ {
		p := &proc{t: t, name: fmt.Sprintf("n%d", i), dataDir: t.TempDir(), label: label,
			gossip: freeAddr(t), http: freeAddr(t), rmq: freeAddr(t), zk: freeAddr(t), log: newSyncBuffer()}
		if i > 0 {
			p.join = ps[0].gossip
		}
		p.start()
		ps = append(ps, p)
		t.Cleanup(func() {
			p.stop(syscall.SIGINT)
			if t.Failed() {
				t.Logf("log of %s:\n%s", p.name, p.log.String())
			}
		})
		waitUntil(t, 20*time.Second, func() error { return p.healthy() })
	}
	return ps
}

func (p *proc) healthy() error {
	resp, err := http.Get("http://" + p.http + "/v1/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s health: %d %s", p.name, resp.StatusCode, b)
	}
	return nil
}

func waitUntil(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	testutil.Eventually(t, d, f)
}

// fakeBroker registers over the RocketMQ port every interval, reconnecting
// when its connection breaks, as a broker does, until stopped.
func fakeBroker(ctx context.Context, addr string, b *rocketmqtest.Broker, every time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var cl *rocketmqtest.Client
		defer func() {
			if cl != nil {
				cl.Close()
			}
		}()
		for ctx.Err() == nil {
			if cl == nil {
				cl, _ = rocketmqtest.Dial(addr)
			}
			if cl != nil {
				if _, err := cl.Register(b); err != nil {
					cl.Close()
					cl = nil
					select {
					case <-ctx.Done():
					case <-time.After(100 * time.Millisecond):
					}
					continue
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}()
	return done
}

// renewer PUTs an HTTP registration with a TTL every interval.
func renewer(ctx context.Context, httpAddr, body string, every time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			req, _ := http.NewRequest("PUT", "http://"+httpAddr+"/v1/brokers", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}()
	return done
}

// watcher polls one route every 10 ms and accounts every moment it was
// missing or different from the first answer.
type watcher struct {
	mu       sync.Mutex
	first    string
	bad      time.Duration
	badCount int
	lastBad  string
	polls    int
}

func watch(ctx context.Context, get func() (string, error)) (*watcher, <-chan struct{}) {
	w := &watcher{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := time.Now()
		for ctx.Err() == nil {
			got, err := get()
			now := time.Now()
			w.mu.Lock()
			w.polls++
			switch {
			case err != nil:
				// The poller's own transport trouble is not the route's.
			case w.first == "":
				w.first = got
			case got != w.first:
				w.bad += now.Sub(last)
				w.badCount++
				w.lastBad = got
			}
			w.mu.Unlock()
			last = now
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return w, done
}

func (w *watcher) report() (bad time.Duration, n int, last string, polls int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bad, w.badCount, w.lastBad, w.polls
}

// rmqRoute is the topic's route body (or its error code) from one agent.
func rmqRoute(addr, topic string) func() (string, error) {
	var cl *rocketmqtest.Client
	return func() (string, error) {
		if cl == nil {
			var err error
			if cl, err = rocketmqtest.Dial(addr); err != nil {
				return "", err
			}
		}
		resp, err := cl.Route(topic, remoting.VersionCurrent)
		if err != nil {
			cl.Close()
			cl = nil
			return "", err
		}
		if resp.Code != remoting.Success {
			return fmt.Sprintf("code %d %s", resp.Code, resp.Remark), nil
		}
		return string(resp.Body), nil
	}
}

func httpGet(addr, path string) func() (string, error) {
	return func() (string, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b), err
	}
}

// incarnationOn is the incarnation p's peer at httpAddr sees for p.
func incarnationOn(httpAddr, node string) (string, error) {
	body, err := httpGet(httpAddr, "/v1/members")()
	if err != nil {
		return "", err
	}
	i := strings.Index(body, `"name":"`+node+`"`)
	if i < 0 {
		return "", fmt.Errorf("%s not in members: %s", node, body)
	}
	rest := body[i:]
	if end := strings.Index(rest, "}}"); end >= 0 {
		rest = rest[:end]
	}
	if !strings.Contains(rest, `"status":"alive"`) {
		return "", fmt.Errorf("%s not alive: %s", node, rest)
	}
	j := strings.Index(rest, `"inc":"`)
	if j < 0 {
		return "", fmt.Errorf("no incarnation tag: %s", rest)
	}
	inc, _, _ := strings.Cut(rest[j+len(`"inc":"`):], `"`)
	return inc, nil
}

// An agent restarted with its data dir, by SIGTERM then start (systemctl
// restart) and by SIGKILL then start (a supervisor after a crash), makes no
// route it carried disappear or change on the other agents, polled every
// 10 ms: neither a broker registered over the RocketMQ port, re-registering
// through a connection it re-opens, nor an HTTP registration with a TTL,
// renewed. Once their clients stop, both are withdrawn after their own
// timeout (plus the 5 s expiry scan for the broker).
func TestRestartKeepsRoutesOnOtherAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	ps := startProcs(t, 3)
	a, others := ps[0], ps[1:]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const timeout = 6 * time.Second
	b := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-r", Addr: "127.0.0.1:10911", HAAddr: "127.0.0.1:10912",
		Topics: map[string]remoting.TopicConfig{"RestartTopic": rocketmqtest.Topic("RestartTopic", 8),
			"TBW102": rocketmqtest.Topic("TBW102", 8)},
		DataVersion:      remoting.DataVersion{Counter: 7, Timestamp: 1700000000000},
		HeartbeatTimeout: timeout}
	brokerCtx, stopBroker := context.WithCancel(ctx)
	brokerDone := fakeBroker(brokerCtx, a.rmq, b, time.Second)
	reg := `{"cluster":"HttpCluster","brokerName":"broker-h","brokerId":0,"addr":"127.0.0.1:10921",
		"topics":{"HttpTopic":{"readQueueNums":2,"writeQueueNums":2,"perm":6}},"ttl":"` + timeout.String() + `"}`
	renewCtx, stopRenew := context.WithCancel(ctx)
	renewDone := renewer(renewCtx, a.http, reg, time.Second)
	for _, p := range others {
		get := rmqRoute(p.rmq, "RestartTopic")
		waitUntil(t, 20*time.Second, func() error {
			if got, _ := get(); !strings.Contains(got, "127.0.0.1:10911") {
				return fmt.Errorf("%s: RestartTopic %s", p.name, got)
			}
			if got, _ := httpGet(p.http, "/v1/topics/HttpTopic")(); !strings.HasPrefix(got, "200 ") {
				return fmt.Errorf("%s: HttpTopic %s", p.name, got)
			}
			return nil
		})
	}
	// A broker unregistered before the restarts must stay gone through
	// them: the restarted agent must not resurrect it.
	gone := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-u", Addr: "127.0.0.1:10931",
		Topics: map[string]remoting.TopicConfig{"GoneTopic": rocketmqtest.Topic("GoneTopic", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	gcl, err := rocketmqtest.Dial(a.rmq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gcl.Register(gone); err != nil {
		t.Fatal(err)
	}
	getGone := rmqRoute(others[1].rmq, "GoneTopic")
	waitUntil(t, 10*time.Second, func() error {
		if got, _ := getGone(); !strings.Contains(got, "10931") {
			return fmt.Errorf("GoneTopic: %s", got)
		}
		return nil
	})
	if err := gcl.Unregister(gone); err != nil {
		t.Fatal(err)
	}
	gcl.Close()
	for _, p := range ps {
		get := rmqRoute(p.rmq, "GoneTopic")
		waitUntil(t, 10*time.Second, func() error {
			if got, _ := get(); !strings.HasPrefix(got, "code 17") {
				return fmt.Errorf("%s: GoneTopic still routed: %s", p.name, got)
			}
			return nil
		})
	}
	type watched struct {
		what string
		w    *watcher
		done <-chan struct{}
	}
	var ws []watched
	watchCtx, stopWatch := context.WithCancel(ctx)
	for _, p := range others {
		w, done := watch(watchCtx, rmqRoute(p.rmq, "RestartTopic"))
		ws = append(ws, watched{p.name + " RocketMQ route", w, done})
		w, done = watch(watchCtx, httpGet(p.http, "/v1/topics/HttpTopic"))
		ws = append(ws, watched{p.name + " HTTP route", w, done})
		w, done = watch(watchCtx, rmqRoute(p.rmq, "GoneTopic"))
		ws = append(ws, watched{p.name + " unregistered broker's route (must stay gone)", w, done})
	}
	// Both registrations are in the data dir before the first restart
	// (each is saved before its answer: agent TestAcknowledgedRegistrationIsDurable).
	waitUntil(t, 10*time.Second, func() error {
		// leases.json, or the log of changes since (agent/lease/log.go).
		snap, err := os.ReadFile(a.dataDir + "/leases.json")
		if os.IsNotExist(err) {
			err = nil
		}
		log, _ := os.ReadFile(a.dataDir + "/leases.log")
		saved := append(snap, log...)
		if err != nil || !bytes.Contains(saved, []byte("broker-r")) || !bytes.Contains(saved, []byte("broker-h")) {
			return fmt.Errorf("leases not saved yet (%v): %s", err, saved)
		}
		return nil
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		incBefore, err := incarnationOn(others[0].http, a.name)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		a.stop(sig)
		a.join = others[0].gossip
		a.start()
		waitUntil(t, 20*time.Second, func() error {
			inc, err := incarnationOn(others[1].http, a.name)
			if err == nil && inc == incBefore {
				err = fmt.Errorf("still the old incarnation %s", inc)
			}
			return err
		})
		t.Logf("%v then start: back in the cluster with a new incarnation after %v", sig, time.Since(began).Round(time.Millisecond))
		// The restarted agent serves the route itself: the broker's
		// connection came back and its registration was confirmed.
		get := rmqRoute(a.rmq, "RestartTopic")
		waitUntil(t, 20*time.Second, func() error {
			if got, _ := get(); got != ws[0].w.first {
				return fmt.Errorf("restarted agent answers %s", got)
			}
			return nil
		})
		// Keep watching a while (200 polls, ~2 s): peers go from the
		// old incarnation's records to the new ones until the restarted
		// agent's own snapshot reaches them.
		var base []int
		for _, w := range ws {
			_, _, _, polls := w.w.report()
			base = append(base, polls)
		}
		waitUntil(t, 30*time.Second, func() error {
			for i, w := range ws {
				if _, _, _, polls := w.w.report(); polls < base[i]+200 {
					return fmt.Errorf("%s: %d polls since the restart", w.what, polls-base[i])
				}
			}
			return nil
		})
	}
	stopWatch()
	for _, w := range ws {
		<-w.done
		bad, n, last, polls := w.w.report()
		t.Logf("%s: %d polls, route missing or changed for %v", w.what, polls, bad)
		if n > 0 {
			t.Errorf("%s: route missing or changed in %d of %d polls (%v in all); last seen %q, want %q", w.what, n, polls, bad, last, w.w.first)
		}
	}

	// Clients gone for good: each registration goes after its own
	// timeout, on every agent.
	stopBroker()
	stopRenew()
	<-brokerDone
	<-renewDone
	stopped := time.Now()
	for _, p := range ps {
		get := rmqRoute(p.rmq, "RestartTopic")
		waitUntil(t, timeout+10*time.Second, func() error {
			if got, _ := get(); !strings.HasPrefix(got, "code 17") {
				return fmt.Errorf("%s still routes RestartTopic: %s", p.name, got)
			}
			if got, _ := httpGet(p.http, "/v1/topics/HttpTopic")(); !strings.HasPrefix(got, "404 ") {
				return fmt.Errorf("%s still routes HttpTopic: %s", p.name, got)
			}
			return nil
		})
	}
	t.Logf("both withdrawn everywhere %v after their clients stopped (timeout %v, expiry scan 5 s)", time.Since(stopped).Round(time.Millisecond), timeout)
}
