package netns

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const echoPort = "7000"

func startEcho(t *testing.T, h *Host, addr string) *Proc {
	t.Helper()
	p := h.Start(selfExe(t), helperArg, "echo-server", addr)
	if err := p.WaitLog("ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return p
}

func greeting(ctx context.Context, from *Host, addr string) (string, error) {
	c, err := from.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	return bufio.NewReader(c).ReadString('\n')
}

func TestHostsReachEachOther(t *testing.T) {
	t.Parallel()
	l := New(t, 3)
	for _, h := range l.Hosts() {
		if !l.Subnet().Contains(h.IP()) || !strings.HasPrefix(h.Addr(), "198.1") {
			t.Fatalf("host %d address %s outside %s", h.Index(), h.Addr(), l.Subnet())
		}
		startEcho(t, h, net.JoinHostPort(h.Addr(), echoPort))
	}
	ctx := t.Context()
	// Separate processes in each namespace, through `ip netns exec`.
	for _, from := range l.Hosts() {
		for _, to := range l.Hosts() {
			if from == to {
				continue
			}
			out, err := from.Run(ctx, selfExe(t), helperArg, "dial", net.JoinHostPort(to.Addr(), echoPort))
			if err != nil {
				t.Fatal(err)
			}
			mustContain(t, string(out), fmt.Sprintf("hello from %s:%s to %s:", to.Addr(), echoPort, from.Addr()))
		}
	}
	// The test process itself, from inside host 0.
	got, err := greeting(ctx, l.Host(0), net.JoinHostPort(l.Host(2).Addr(), echoPort))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, got, "to "+l.Host(0).Addr()+":")
}

func TestLoopbackIsPerHost(t *testing.T) {
	t.Parallel()
	l := New(t, 2)
	startEcho(t, l.Host(0), "127.0.0.1:"+echoPort)
	ctx := t.Context()
	if _, err := greeting(ctx, l.Host(0), "127.0.0.1:"+echoPort); err != nil {
		t.Fatalf("host 0 cannot reach its own loopback: %v", err)
	}
	if _, err := greeting(ctx, l.Host(1), "127.0.0.1:"+echoPort); err == nil {
		t.Fatal("host 1 reached a server on host 0's loopback")
	}
	if _, err := l.Host(0).DialContext(ctx, "tcp", "localhost:"+echoPort); err == nil {
		t.Fatal("DialContext accepted a host name")
	}
}

func TestHTTPClientIntoHost(t *testing.T) {
	t.Parallel()
	l := New(t, 2)
	// A server that only exists inside host 1, as an agent's API would.
	ln, err := l.Host(1).Listen("tcp", net.JoinHostPort(l.Host(1).Addr(), "8080"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "client %s", r.RemoteAddr)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	resp, err := l.Host(0).HTTPClient().Get("http://" + net.JoinHostPort(l.Host(1).Addr(), "8080") + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	mustContain(t, string(body), "client "+l.Host(0).Addr()+":")
}

func TestMulticastFloodsBridge(t *testing.T) {
	t.Parallel()
	l := New(t, 3)
	// mDNS's group, on a port no mDNS responder uses.
	const group = "224.0.0.251:5454"
	var recv []*Proc
	for _, h := range l.Hosts()[1:] {
		p := h.Start(selfExe(t), helperArg, "mcast-recv", group)
		if err := p.WaitLog("ready", 10*time.Second); err != nil {
			t.Fatal(err)
		}
		recv = append(recv, p)
	}
	send := func(payload string) {
		t.Helper()
		if _, err := l.Host(0).Run(t.Context(), selfExe(t), helperArg, "mcast-send", group, payload); err != nil {
			t.Fatal(err)
		}
	}
	wantGot := func(p *Proc, payload string) {
		t.Helper()
		if err := p.WaitLog("got "+payload+" from "+l.Host(0).Addr(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	send("one")
	wantGot(recv[0], "one")
	wantGot(recv[1], "one")

	l.LinkDown(2)
	send("two")
	wantGot(recv[0], "two")
	l.LinkUp(2)
	send("three")
	wantGot(recv[0], "three")
	wantGot(recv[1], "three")
	// "three" went out after "two", on the same path: had host 2 been
	// reachable for "two", it would show by now.
	if strings.Contains(recv[1].Log(), "got two") {
		t.Fatalf("host 2 received multicast while its link was down:\n%s", recv[1].Log())
	}
}

func TestLinkDownIsolatesHost(t *testing.T) {
	t.Parallel()
	l := New(t, 3)
	for _, h := range l.Hosts() {
		startEcho(t, h, net.JoinHostPort(h.Addr(), echoPort))
	}
	reach := func(from, to int, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		_, err := greeting(ctx, l.Host(from), net.JoinHostPort(l.Host(to).Addr(), echoPort))
		return err
	}
	if err := reach(0, 1, 2*time.Second); err != nil {
		t.Fatalf("before LinkDown: %v", err)
	}

	l.LinkDown(1)
	// Silence, not a refusal: a cut cable gives timeouts, which is what
	// memberlist's failure detector has to cope with.
	for _, pair := range [][2]int{{0, 1}, {1, 0}, {2, 1}} {
		if err := reach(pair[0], pair[1], 300*time.Millisecond); err == nil {
			t.Fatalf("host %d reached host %d across a downed link", pair[0], pair[1])
		}
	}
	if err := reach(0, 2, 2*time.Second); err != nil {
		t.Fatalf("hosts 0 and 2 lost each other when host 1 went down: %v", err)
	}

	l.LinkUp(1)
	// ARP has to resolve again after the outage, so allow a few attempts.
	poll(t, 10*time.Second, func() bool { return reach(0, 1, 500*time.Millisecond) == nil }, "host 0 to reach host 1 again")
	if err := reach(1, 2, 2*time.Second); err != nil {
		t.Fatalf("after LinkUp: %v", err)
	}
}

func TestNothingRoutesOutOfTheLab(t *testing.T) {
	t.Parallel()
	l := New(t, 1)
	h := l.Host(0)
	routes, err := h.Run(t.Context(), "ip", "-4", "route", "show", "table", "all")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(routes), "default") {
		t.Fatalf("host has a default route:\n%s", routes)
	}
	if v6, _ := h.Run(t.Context(), "ip", "-6", "addr", "show"); strings.TrimSpace(string(v6)) != "" {
		t.Fatalf("IPv6 is on without WithIPv6:\n%s", v6)
	}
	// Another /24 of the benchmark range, so even a routing mistake could
	// not put traffic on a real network: the kernel must refuse locally.
	other := l.Subnet().Addr().As4()
	other[2]++
	_, err = h.DialContext(t.Context(), "tcp", net.JoinHostPort(netip.AddrFrom4(other).Next().String(), echoPort))
	if err == nil || !strings.Contains(err.Error(), "network is unreachable") {
		t.Fatalf("dial outside the lab's /24: %v, want network is unreachable", err)
	}
}

func TestWithIPv6LinkLocalIsUsableAtOnce(t *testing.T) {
	t.Parallel()
	l := New(t, 2, WithIPv6())
	out, err := l.Host(0).Run(t.Context(), "ip", "-6", "-o", "addr", "show", "dev", "eth0", "scope", "link")
	if err != nil {
		t.Fatal(err)
	}
	// "2: eth0    inet6 fe80::1c2f:.../64 scope link ..."
	f := strings.Fields(string(out))
	if len(f) < 4 || strings.Contains(string(out), "tentative") {
		t.Fatalf("no usable link-local address on host 0:\n%s", out)
	}
	ll, _, _ := strings.Cut(f[3], "/")
	startEcho(t, l.Host(0), "[::]:"+echoPort)
	got, err := l.Host(1).Run(t.Context(), selfExe(t), helperArg, "dial", "["+ll+"%eth0]:"+echoPort)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(got), "hello from ["+ll)
}
