package agenttest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/listener"
	"github.com/namecast/namecast/gossip/gossiptest"
)

// Memory carries a cluster's traffic without a socket: gossip over an
// in-memory network, and every door of every agent on an in-memory
// listener (package listener). Nothing then waits on the kernel, so the
// whole cluster runs inside a testing/synctest bubble, where memberlist's
// timers, TTLs and session timeouts cost no wall time and a loaded machine
// cannot make a deadline pass early. Make it inside the bubble, pass
// Option() to Start, and reach the agents through Client, URL and Dial.
type Memory struct {
	// Net is the gossip network, with its fault knobs.
	Net *gossiptest.Network

	mu     sync.Mutex
	lns    map[string]*listener.Memory // by address: "mem:agent-0/http"
	client *http.Client
}

// NewMemory makes an in-memory network seeded with seed; t's cleanup
// closes it after the cluster's (call NewMemory before Start). Inside a
// bubble that cleanup then lets the bubble's clock run a minute: after
// Shutdown memberlist leaves a probe waiting for its timeout, and a
// bubble whose test has returned stops its clock, so the goroutine would
// be reported as deadlocked.
func NewMemory(t testing.TB, seed int64) *Memory {
	m := &Memory{Net: gossiptest.NewNetwork(seed), lns: map[string]*listener.Memory{}}
	m.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: m.dialHTTP}}
	bubbled := inBubble()
	t.Cleanup(func() {
		m.client.CloseIdleConnections()
		m.Net.Close()
		if bubbled {
			time.Sleep(time.Minute)
		}
	})
	return m
}

// inBubble reports whether the caller runs in a synctest bubble:
// synctest.Wait panics outside one.
func inBubble() (in bool) {
	defer func() {
		if recover() != nil {
			in = false
		}
	}()
	synctest.Wait()
	return true
}

// Option makes each agent gossip over m.Net and bind every door on an
// in-memory listener at "mem:NODE/LISTENER" ("mem:agent-0/rocketmq"); the
// HTTP door also answers requests naming the agent's node name as their
// host (URL). Give it after WithProfile, which resets the memberlist
// tuning.
func (m *Memory) Option() Option {
	gossipOver := WithNetwork(m.Net)
	return func(c *agent.Config) {
		gossipOver(c)
		node := c.NodeName
		c.HTTPAllowHosts = append(c.HTTPAllowHosts, node)
		c.Listen = func(name, _ string) (net.Listener, error) {
			ln := listener.NewMemory(node + "/" + name)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.lns[ln.Addr().String()] = ln
			return ln, nil
		}
	}
}

// Dial connects to a door's in-memory address (an agent's Addr(name)).
func (m *Memory) Dial(ctx context.Context, addr string) (net.Conn, error) {
	m.mu.Lock()
	ln := m.lns[addr]
	m.mu.Unlock()
	if ln == nil {
		return nil, fmt.Errorf("agenttest: no in-memory listener at %q", addr)
	}
	return ln.Dial(ctx)
}

// Client is an HTTP client that reaches each agent's HTTP door at the URL
// "http://NODE/...", NODE the agent's node name (URL builds them). Its
// idle connections close with the network.
func (m *Memory) Client() *http.Client { return m.client }

// URL is path on a's HTTP door, for Client.
func (m *Memory) URL(a *agent.Agent, path string) string { return "http://" + a.Name() + path }

// dialHTTP resolves "NODE:80" to the node's current HTTP listener: after a
// restart, the new agent's.
func (m *Memory) dialHTTP(ctx context.Context, _, addr string) (net.Conn, error) {
	node, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if strings.Contains(node, "/") {
		return nil, fmt.Errorf("agenttest: bad node name %q", node)
	}
	return m.Dial(ctx, "mem:"+node+"/http")
}
