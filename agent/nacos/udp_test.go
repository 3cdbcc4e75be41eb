package nacos

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/internal/testutil"
)

// udpClient is a 1.x client's push receiver: a UDP socket whose port it
// names as udpPort when it lists a service.
type udpClient struct {
	t    *testing.T
	conn *net.UDPConn
}

func newUDPClient(t *testing.T) *udpClient {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &udpClient{t, conn}
}

func (u *udpClient) port() int { return u.conn.LocalAddr().(*net.UDPAddr).Port }

// list lists svc over the 1.x API as a subscriber, naming clientIP as the
// client's address (the door pushes to the request's host whatever it
// names).
func (u *udpClient) list(s *Server, svc, clientIP string) nacoswire.ServiceInfo {
	u.t.Helper()
	code, body := do(u.t, s, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {svc},
		"udpPort": {strconv.Itoa(u.port())}, "clientIP": {clientIP}})
	var info nacoswire.ServiceInfo
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil {
		u.t.Fatalf("list: %d %s", code, body)
	}
	return info
}

type udpPush struct {
	Type        string `json:"type"`
	Data        string `json:"data"`
	LastRefTime int64  `json:"lastRefTime"`
	gzipped     bool
	from        *net.UDPAddr
	info        nacoswire.ServiceInfo
}

// next reads the next push within wait; ok false when none came.
func (u *udpClient) next(wait time.Duration) (p udpPush, ok bool) {
	u.t.Helper()
	buf := make([]byte, 64<<10)
	u.conn.SetReadDeadline(time.Now().Add(wait))
	n, from, err := u.conn.ReadFromUDP(buf)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return p, false
	}
	if err != nil {
		u.t.Fatal(err)
	}
	b := buf[:n]
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			u.t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			u.t.Fatal(err)
		}
		p.gzipped = true
	}
	if err := json.Unmarshal(b, &p); err != nil {
		u.t.Fatalf("push %q: %v", b, err)
	}
	if err := json.Unmarshal([]byte(p.Data), &p.info); err != nil {
		u.t.Fatalf("push data %q: %v", p.Data, err)
	}
	p.from = from
	return p, true
}

func (u *udpClient) must(wait time.Duration) udpPush {
	u.t.Helper()
	p, ok := u.next(wait)
	if !ok {
		u.t.Fatalf("no UDP push within %v", wait)
	}
	return p
}

// ack answers a push as the Java and Go 1.x clients do (lastRefTime as a
// string), from the receiving socket.
func (u *udpClient) ack(p udpPush) {
	u.t.Helper()
	b := fmt.Sprintf(`{"type": "push-ack", "lastRefTime":"%d", "data":""}`, p.LastRefTime)
	if _, err := u.conn.WriteToUDP([]byte(b), p.from); err != nil {
		u.t.Fatal(err)
	}
}

func pendingPushes(s *Server) int {
	s.udp.mu.Lock()
	defer s.udp.mu.Unlock()
	return len(s.udp.pending)
}

// pendingTo reports whether a push to port waits for its ack.
func pendingTo(s *Server, port int) bool {
	s.udp.mu.Lock()
	defer s.udp.mu.Unlock()
	for _, p := range s.udp.pending {
		if int(p.to.Port()) == port {
			return true
		}
	}
	return false
}

// Item 7: a 1.x subscriber (list with udpPort) is pushed each change of
// its service's instances over UDP, in Nacos' datagram (type dom, the
// list answer as data, gzipped from 1 KiB), at the host the list came
// from, not the clientIP it named; an acked push is not sent again.
func TestUDPPushToSubscriber(t *testing.T) {
	s, _ := startServer(t)
	sub := newUDPClient(t)
	if info := sub.list(s, "orders", "203.0.113.9"); len(info.Hosts) != 0 {
		t.Fatalf("list %+v", info)
	}
	prov := dial(t, s)
	in := nacoswire.Instance{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}
	if err := prov.Register("orders", in); err != nil {
		t.Fatal(err)
	}
	p := sub.must(5 * time.Second)
	if p.Type != "dom" || p.info.Name != "DEFAULT_GROUP@@orders" || len(p.info.Hosts) != 1 || p.info.Hosts[0].IP != "10.0.0.1" || p.gzipped {
		t.Fatalf("push %+v", p)
	}
	sub.ack(p)
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := pendingPushes(s); n != 0 {
			return fmt.Errorf("%d pushes wait for an ack after it was sent", n)
		}
		return nil
	})
	// A big list is gzipped; a later push has a later lastRefTime.
	big := nacoswire.Instance{IP: "10.0.0.2", Port: 2, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
		Metadata: map[string]string{"pad": strings.Repeat("x", 2000)}}
	if err := prov.Register("orders", big); err != nil {
		t.Fatal(err)
	}
	p2 := sub.must(5 * time.Second)
	if !p2.gzipped || len(p2.info.Hosts) != 2 || p2.LastRefTime <= p.LastRefTime {
		t.Fatalf("push of 2 hosts, gzipped %v, hosts %d, lastRefTime %d after %d", p2.gzipped, len(p2.info.Hosts), p2.LastRefTime, p.LastRefTime)
	}
	sub.ack(p2)
	if err := prov.Deregister("orders", big); err != nil {
		t.Fatal(err)
	}
	if p3 := sub.must(5 * time.Second); len(p3.info.Hosts) != 1 {
		t.Fatalf("push after deregister: %+v", p3.info.Hosts)
	}
}

// A push not acked is sent once more after UDPAckTimeout, then given up
// (Nacos' UDP_MAX_RETRY_TIMES).
func TestUDPPushRetriedOnceWithoutAck(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.UDPAckTimeout = 200 * time.Millisecond })
	sub := newUDPClient(t)
	sub.list(s, "orders", "")
	prov := dial(t, s)
	if err := prov.Register("orders", nacoswire.Instance{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	first := sub.must(5 * time.Second)
	again := sub.must(5 * time.Second)
	if again.LastRefTime != first.LastRefTime {
		t.Fatalf("resend has lastRefTime %d, the push %d", again.LastRefTime, first.LastRefTime)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := pendingPushes(s); n != 0 {
			return fmt.Errorf("%d pushes still pending after the resend's timeout", n)
		}
		return nil
	})
	if p, ok := sub.next(3 * s.cfg.UDPAckTimeout); ok {
		t.Fatalf("a third send: %+v", p)
	}
}

// A subscriber that stops listing expires after UDPSubscriberTTL and is
// pushed nothing more.
func TestUDPSubscriberExpires(t *testing.T) {
	s, reg := startServer(t, func(c *Config) { c.UDPSubscriberTTL = 300 * time.Millisecond })
	sub := newUDPClient(t)
	sub.list(s, "orders", "")
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := s.udpSubscribers(); n != 0 {
			return fmt.Errorf("%d subscribers after their TTL", n)
		}
		return nil
	})
	prov := dial(t, s)
	if err := prov.Register("orders", nacoswire.Instance{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	if got := reg.Routes.URLs("orders", "nacos"); len(got) != 1 {
		t.Fatalf("records %q", got)
	}
	if p, ok := sub.next(500 * time.Millisecond); ok {
		t.Fatalf("an expired subscriber was pushed %+v", p)
	}
}

// Subscribers are bounded: past Config.MaxUDPSubscribers the list is
// still answered and no subscriber is added, until one expires. (The
// per-remote-host bound needs a second host: loopback counts against the
// total only.)
func TestUDPSubscribersBounded(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxUDPSubscribers = 50 })
	sub := newUDPClient(t)
	for i := range 51 {
		sub.list(s, "svc"+strconv.Itoa(i), "")
	}
	if n := s.udpSubscribers(); n != 50 {
		t.Fatalf("%d subscribers, limit 50", n)
	}
}

// A remote host is bounded to MaxUDPSubscribersPerHost, so it cannot take
// the room of the clients beside the agent. (Subscribed directly, with
// the answer the door would give, so no push is due and no datagram
// leaves for 198.18.0.1.)
func TestUDPSubscribersPerRemoteHost(t *testing.T) {
	s, _ := startServer(t)
	for i := range MaxUDPSubscribersPerHost + 1 {
		sv, _ := newService("", "", "svc"+strconv.Itoa(i))
		s.udpSubscribe("198.18.0.1:40000", 9, sv, "", s.serviceInfo(sv, ""))
	}
	if n := s.udpSubscribers(); n != MaxUDPSubscribersPerHost {
		t.Fatalf("%d subscribers from one remote host, limit %d", n, MaxUDPSubscribersPerHost)
	}
	newUDPClient(t).list(s, "orders", "")
	if n := s.udpSubscribers(); n != MaxUDPSubscribersPerHost+1 {
		t.Fatalf("a subscriber on loopback not added past a remote host's bound: %d", n)
	}
}

// An ack names its push by lastRefTime and comes from the port pushed
// to: one from another port, or garbage, leaves the push pending (to be
// resent), and the subscriber's own ack ends it.
func TestUDPAckFromElsewhereIgnored(t *testing.T) {
	s, _ := startServer(t)
	a, b := newUDPClient(t), newUDPClient(t)
	a.list(s, "orders", "")
	b.list(s, "orders", "")
	prov := dial(t, s)
	if err := prov.Register("orders", nacoswire.Instance{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}); err != nil {
		t.Fatal(err)
	}
	pa, pb := a.must(5*time.Second), b.must(5*time.Second)
	// From b: a's ack (the right lastRefTime, the wrong port), garbage,
	// then b's own ack. The door reads b's datagrams in order, so once
	// b's push is acked the others were read.
	b.ack(pa)
	for _, junk := range []string{"", "{", `{"type":"push-ack"}`, `{"type":"push-ack","lastRefTime":"x"}`, `{"type":"dom","lastRefTime":1}`} {
		b.conn.WriteToUDP([]byte(junk), pb.from)
	}
	b.ack(pb)
	testutil.Eventually(t, 5*time.Second, func() error {
		if pendingTo(s, b.port()) {
			return fmt.Errorf("b's push still pending")
		}
		return nil
	})
	if !pendingTo(s, a.port()) {
		t.Fatal("a's push was ended by an ack from another port")
	}
	a.ack(pa)
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := pendingPushes(s); n != 0 {
			return fmt.Errorf("%d pushes pending after a's ack", n)
		}
		return nil
	})
}

func TestParseAck(t *testing.T) {
	for in, want := range map[string]int64{
		`{"type": "push-ack", "lastRefTime":"123", "data":""}`: 123,
		`{"type":"push-ack","lastRefTime":456}`:                456,
	} {
		if got, ok := parseAck([]byte(in)); !ok || got != want {
			t.Errorf("parseAck(%s) = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "null", `{"type":"push-ack"}`, `{"type":"push-ack","lastRefTime":"1x"}`, `{"type":"dom","lastRefTime":1}`} {
		if _, ok := parseAck([]byte(in)); ok {
			t.Errorf("parseAck(%q) accepted", in)
		}
	}
}

// FuzzParseAck: any datagram is read or dropped, never a panic.
func FuzzParseAck(f *testing.F) {
	f.Add([]byte(`{"type": "push-ack", "lastRefTime":"123", "data":""}`))
	f.Add([]byte(`{"type":"push-ack","lastRefTime":456}`))
	f.Add([]byte(`{"type":"push-ack","lastRefTime":"\""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseAck(b)
	})
}
