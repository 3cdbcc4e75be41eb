package dns

import (
	"net"
	"slices"
	"testing"
	"time"

	miekg "github.com/miekg/dns"

	"github.com/namecast/namecast/internal/testutil"
)

// startServer serves cat on loopback TCP and UDP, on one port as the door
// binds them; t's cleanup closes it.
func startServer(t *testing.T, cfg ServerConfig) (*Server, string) {
	t.Helper()
	testutil.CheckLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		ln.Close()
		t.Skipf("UDP on the TCP listener's port: %v", err)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ln.Addr().String()
}

// The door answers over real UDP and TCP sockets, on one port.
func TestServerAnswersOverUDPAndTCP(t *testing.T) {
	s, addr := startServer(t, ServerConfig{Catalog: testCatalog()})
	if got := s.Addrs(); len(got) != 2 || got[0].Addr != addr || got[1].Addr != addr {
		t.Fatalf("Addrs %v, want dns and dns-udp on %s", got, addr)
	}
	for _, network := range []string{"udp", "tcp"} {
		c := &miekg.Client{Net: network, Timeout: 5 * time.Second}
		m, _, err := c.Exchange(query("web.service.consul.", miekg.TypeA), addr)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		if got := addrs(m.Answer); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
			t.Fatalf("%s: %v", network, m)
		}
	}
	// Several queries on one TCP connection.
	conn, err := miekg.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for range 3 {
		if err := conn.WriteMsg(query("agent-a.node.consul.", miekg.TypeA)); err != nil {
			t.Fatal(err)
		}
		m, err := conn.ReadMsg()
		if err != nil || addrs(m.Answer)[0] != "10.0.0.1" {
			t.Fatalf("TCP query on a kept connection: %v %v", m, err)
		}
	}
}

// A TCP connection past the door's bound is closed at once, said in the
// log and counted, and the connections within it are served.
func TestTCPConnectionsPastTheBoundAreRefused(t *testing.T) {
	log := &testutil.Buffer{}
	_, addr := startServer(t, ServerConfig{Catalog: testCatalog(), MaxConns: 1, Logger: testLogger(log)})
	first, err := miekg.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := first.WriteMsg(query("web.service.consul.", miekg.TypeA)); err != nil {
		t.Fatal(err)
	}
	if _, err := first.ReadMsg(); err != nil {
		t.Fatal(err)
	}
	second, err := miekg.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetDeadline(time.Now().Add(5 * time.Second))
	second.WriteMsg(query("web.service.consul.", miekg.TypeA))
	if m, err := second.ReadMsg(); err == nil {
		t.Fatalf("a connection past the bound was answered: %v", m)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if !contains(log.String(), "TCP connection refused") {
			return errorf("log: %q", log.String())
		}
		return nil
	})
}

// A TCP client that connects and sends nothing is let go after the first
// read's deadline, not held.
func TestIdleTCPConnectionIsClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the door's 2 s first-read deadline")
	}
	_, addr := startServer(t, ServerConfig{Catalog: testCatalog()})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := c.Read(make([]byte, 1)); err == nil || time.Since(start) > 9*time.Second {
		t.Fatalf("read %v after %v: want the door to close the silent connection after ~2s", err, time.Since(start))
	}
}
