package zookeeper

import (
	"fmt"
	"github.com/namecast/namecast/internal/testutil"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/agenttest"
)

// cluster starts n agents with the ZooKeeper door on free ports. They use
// the lan profile's failure detection, not agenttest's fast one: on a
// loaded CI machine a fast detector can declare a stalled agent dead for a
// moment, dropping its ephemeral znodes, and these tests count events.
func cluster(t *testing.T, n int, opts ...agenttest.Option) *agenttest.Cluster {
	t.Helper()
	return agenttest.Start(t, n, append([]agenttest.Option{agenttest.WithProfile("lan")}, opts...)...)
}

// zkAddr is agent i's ZooKeeper address.
func zkAddr(t *testing.T, c *agenttest.Cluster, i int) string {
	t.Helper()
	a := c.Agent(i)
	if a == nil || a.Addr("zookeeper") == "" {
		t.Fatalf("agent %d has no ZooKeeper address", i)
	}
	return a.Addr("zookeeper")
}

// client is a go-zookeeper connection with its event channel, closed at
// cleanup.
type client struct {
	*zk.Conn
	events <-chan zk.Event
	dialer *cutDialer
	sid    int64 // the session connect opened
}

var quiet = zk.WithLogger(log.New(io.Discard, "", 0))

// connect opens a session on addr with the given timeout and waits until it
// has one.
func connect(t *testing.T, addr string, timeout time.Duration) *client {
	t.Helper()
	d := &cutDialer{}
	conn, ev, err := zk.Connect([]string{addr}, timeout, quiet, zk.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	c := &client{Conn: conn, events: ev, dialer: d}
	waitState(t, c, zk.StateHasSession)
	c.sid = conn.SessionID()
	return c
}

func waitState(t *testing.T, c *client, want zk.State) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for c.State() != want {
		select {
		case <-deadline:
			t.Fatalf("state %v, want %v", c.State(), want)
		case <-c.events:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitEvent waits for one watch event.
func waitEvent(t *testing.T, ch <-chan zk.Event, want zk.EventType, path string) zk.Event {
	t.Helper()
	select {
	case ev := <-ch:
		if ev.Type != want || ev.Path != path || ev.State != zk.StateConnected && ev.State != zk.StateHasSession {
			// go-zookeeper reports the wire state 3 as StateConnected.
			if ev.Type != want || ev.Path != path {
				t.Fatalf("event %+v, want %v on %s", ev, want, path)
			}
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatalf("no %v event on %s within 10s", want, path)
	}
	return zk.Event{}
}

// noEvent checks a one-shot watch does not fire again.
func noEvent(t *testing.T, ch <-chan zk.Event, within time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok { // go-zookeeper closes a watch's channel after its event
			t.Fatalf("unexpected second event %+v", ev)
		}
	case <-time.After(within):
	}
}

// eventually polls cond until it returns nil or the deadline passes.
func eventually(t *testing.T, within time.Duration, cond func() error) {
	t.Helper()
	testutil.Eventually(t, within, cond)
}

// children is getChildren that fails the test on error.
func children(t *testing.T, c *client, p string) []string {
	t.Helper()
	ch, _, err := c.Children(p)
	if err != nil {
		t.Fatalf("children %s: %v", p, err)
	}
	return ch
}

func hasChild(c *client, p, name string) error {
	ch, _, err := c.Children(p)
	if err != nil {
		return err
	}
	for _, n := range ch {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("%s has children %v, not %s", p, ch, name)
}

// cutDialer lets a test cut the client's TCP connection (it reconnects)
// or refuse new ones for a while.
type cutDialer struct {
	mu      sync.Mutex
	conns   []net.Conn
	blocked bool
}

func (d *cutDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.blocked {
		return nil, fmt.Errorf("dial blocked by the test")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

// cut closes every open connection; block keeps new ones from opening.
func (d *cutDialer) cut(block bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocked = block
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

func (d *cutDialer) unblock() {
	d.mu.Lock()
	d.blocked = false
	d.mu.Unlock()
}

// assertServiceListed checks agent i's HTTP API lists (or not) the
// interface in GET /v1/services, eventually.
func assertServiceListed(t *testing.T, c *agenttest.Cluster, i int, iface string, want bool) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		resp, err := http.Get("http://" + c.Agent(i).HTTPAddr() + "/v1/services")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if got := strings.Contains(string(b), `"`+iface+`"`); got != want {
			return fmt.Errorf("GET /v1/services = %s, want %s listed: %v", b, iface, want)
		}
		return nil
	})
}

// javaEncode is java.net.URLEncoder.encode, as Dubbo names URL znodes.
func javaEncode(s string) string {
	return strings.NewReplacer("~", "%7E", "*", "*").Replace(url.QueryEscape(s))
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
