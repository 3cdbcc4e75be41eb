package conns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/listener"
	"github.com/namecast/namecast/internal/testutil"
)

// testConn is a door's connection in these tests: serve greets the peer
// with one byte (so a peer can tell it was let in from being refused,
// which reads EOF), then reads until the connection ends.
type testConn struct {
	nc     net.Conn
	closed atomic.Bool // Close was called (by the set)
}

func (c *testConn) Close() error {
	c.closed.Store(true)
	return c.nc.Close()
}

// doorStats counts what the set did with a door's connections.
type doorStats struct {
	mu              sync.Mutex
	opened          []*testConn
	started, served atomic.Int64 // serve calls begun and returned
}

func (d *doorStats) open(nc net.Conn) *testConn {
	c := &testConn{nc: nc}
	d.mu.Lock()
	d.opened = append(d.opened, c)
	d.mu.Unlock()
	return c
}

func (d *doorStats) serve(c *testConn) {
	d.started.Add(1)
	defer d.served.Add(1)
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write([]byte{'h'}); err == nil {
		io.Copy(io.Discard, c.nc)
	}
	c.nc.Close()
}

// tcpListener listens on a free loopback port, closed at the test's end.
func tcpListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// dial connects to addr and reads the greeting: nil when the set let the
// connection in, an error (EOF) when it refused it.
func dial(t *testing.T, addr string) (net.Conn, error) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// closeWithin closes s, failing the test if Close does not return within
// 10 s (a connection it did not close, a serve it does not see end).
func closeWithin[C Conn](t *testing.T, s *Set[C]) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10 s")
		return nil
	}
}

// refusals collects what Config.Refused is told.
type refusals struct {
	mu  sync.Mutex
	got []Refusal
}

func (r *refusals) note(x Refusal) {
	r.mu.Lock()
	r.got = append(r.got, x)
	r.mu.Unlock()
}

func (r *refusals) all() []Refusal {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Refusal(nil), r.got...)
}

// Past PerIP a new connection from the same IP is refused: the door is
// told (its loud failure) and the connection closed before it is served;
// those already in keep working, and one that ends makes room at once.
func TestPerIPBoundRefusesAndAnEndedConnectionMakesRoom(t *testing.T) {
	testutil.CheckLeaks(t)
	var d doorStats
	var r refusals
	s := New[*testConn](Config{PerIP: 2, Refused: r.note})
	defer closeWithin(t, s)
	ln := tcpListener(t)
	if err := s.Serve(ln, d.open, d.serve); err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	first, err := dial(t, addr)
	if err != nil {
		t.Fatalf("first connection refused: %v", err)
	}
	if _, err := dial(t, addr); err != nil {
		t.Fatalf("second connection refused: %v", err)
	}
	if _, err := dial(t, addr); err == nil {
		t.Fatal("a third connection from 127.0.0.1 was served with PerIP 2")
	}
	got := r.all()
	if len(got) != 1 || !got[0].PerIP || got[0].Max != 2 || got[0].IP != "127.0.0.1" || got[0].Count != 1 {
		t.Fatalf("the door was told %+v; want one per-IP refusal of 127.0.0.1, max 2, count 1", got)
	}
	if n := d.started.Load(); n != 2 {
		t.Fatalf("%d connections served; want 2 (the refused one is never served)", n)
	}
	if _, err := first.Write([]byte("still here")); err != nil {
		t.Fatalf("a connection let in stopped working after a refusal: %v", err)
	}
	first.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		if n := s.Len(); n != 1 {
			return fmt.Errorf("%d connections open; want 1 once the first ended", n)
		}
		return nil
	})
	if _, err := dial(t, addr); err != nil {
		t.Fatalf("no room after a connection ended: %v", err)
	}
}

// Past Total a connection from anywhere is refused.
func TestTotalBoundRefuses(t *testing.T) {
	testutil.CheckLeaks(t)
	var d doorStats
	var r refusals
	s := New[*testConn](Config{Total: 1, Refused: r.note})
	defer closeWithin(t, s)
	ln := tcpListener(t)
	if err := s.Serve(ln, d.open, d.serve); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, ln.Addr().String()); err != nil {
		t.Fatalf("first connection refused: %v", err)
	}
	if _, err := dial(t, ln.Addr().String()); err == nil {
		t.Fatal("a second connection was served with Total 1")
	}
	if got := r.all(); len(got) != 1 || got[0].PerIP || got[0].Max != 1 {
		t.Fatalf("the door was told %+v; want one refusal for the total bound of 1", got)
	}
}

// Close closes every listener and every connection, each through the
// door's Close, and returns only once every serve has returned; after it
// the set takes no listener and nothing is open.
func TestCloseEndsEveryConnectionAndWaitsForServe(t *testing.T) {
	testutil.CheckLeaks(t)
	var d doorStats
	s := New[*testConn](Config{})
	ln1, ln2 := tcpListener(t), tcpListener(t)
	for _, ln := range []net.Listener{ln1, ln2} {
		if err := s.Serve(ln, d.open, d.serve); err != nil {
			t.Fatal(err)
		}
	}
	var clients []net.Conn
	for i := range 6 {
		nc, err := dial(t, []net.Listener{ln1, ln2}[i%2].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, nc)
	}
	if err := closeWithin(t, s); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if started, served := d.started.Load(), d.served.Load(); started != 6 || served != 6 {
		t.Fatalf("after Close: %d serves begun, %d returned; want 6 and 6", started, served)
	}
	for i, c := range d.opened {
		if !c.closed.Load() {
			t.Errorf("connection %d was not closed by Close", i)
		}
	}
	for i, nc := range clients {
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("client %d: read %v after Close; want the connection ended", i, err)
		}
	}
	for _, ln := range []net.Listener{ln1, ln2} {
		if nc, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			nc.Close()
			t.Errorf("%s still accepts after Close", ln.Addr())
		}
	}
	if n := s.Len(); n != 0 {
		t.Errorf("%d connections open after Close", n)
	}
	if err := s.Serve(tcpListener(t), d.open, d.serve); !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after Close: %v; want ErrClosed", err)
	}
	if _, err := s.Listener(tcpListener(t), d.open); !errors.Is(err, ErrClosed) {
		t.Errorf("Listener after Close: %v; want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// Connections arriving while Close runs are either let in and then closed
// by it, or not let in at all: none is left open or served after Close,
// and every serve that began has returned. Run it under -race.
func TestConcurrentAcceptAndClose(t *testing.T) {
	testutil.CheckLeaks(t)
	for round := range 20 {
		var d doorStats
		s := New[*testConn](Config{PerIP: 1000})
		ln := listener.NewMemory(fmt.Sprint("round-", round))
		if err := s.Serve(ln, d.open, d.serve); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var dialers sync.WaitGroup
		for range 8 {
			dialers.Add(1)
			go func() {
				defer dialers.Done()
				for ctx.Err() == nil {
					nc, err := ln.Dial(ctx)
					if err != nil {
						return // closed: Close has begun
					}
					go func() { io.Copy(io.Discard, nc); nc.Close() }()
				}
			}()
		}
		testutil.Eventually(t, 10*time.Second, func() error {
			if n := d.started.Load(); n < 10 {
				return fmt.Errorf("%d connections served so far", n)
			}
			return nil
		})
		if err := closeWithin(t, s); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		cancel()
		dialers.Wait()
		d.mu.Lock()
		opened := len(d.opened)
		d.mu.Unlock()
		if started, served := d.started.Load(), d.served.Load(); started != int64(opened) || served != started {
			t.Fatalf("round %d: %d connections let in, %d serves begun, %d returned after Close; want all equal", round, opened, started, served)
		}
		if n := s.Len(); n != 0 {
			t.Fatalf("round %d: %d connections open after Close", round, n)
		}
	}
}

// Listener hands a server that runs its own goroutines (net/http) only
// the connections within the bounds; one it closes makes room, and Close
// closes those it still holds.
func TestListenerHandsOutOnlyAdmittedConnections(t *testing.T) {
	testutil.CheckLeaks(t)
	var r refusals
	s := New[net.Conn](Config{Total: 1, Refused: r.note})
	defer closeWithin(t, s)
	admitted, err := s.Listener(tcpListener(t), func(nc net.Conn) net.Conn { return nc })
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn)
	go func() {
		defer close(accepted)
		for {
			nc, err := admitted.Accept()
			if err != nil {
				return
			}
			nc.Write([]byte{'h'})
			accepted <- nc
		}
	}()
	addr := admitted.Addr().String()
	if _, err := dial(t, addr); err != nil {
		t.Fatalf("first connection refused: %v", err)
	}
	held := <-accepted
	if _, err := dial(t, addr); err == nil {
		t.Fatal("a second connection was handed out with Total 1")
	}
	if got := r.all(); len(got) != 1 || got[0].Max != 1 {
		t.Fatalf("the door was told %+v; want one refusal for the total bound", got)
	}
	held.Close() // the server is done with it
	client, err := dial(t, addr)
	if err != nil {
		t.Fatalf("no room after the server closed its connection: %v", err)
	}
	<-accepted
	if err := closeWithin(t, s); err != nil {
		t.Fatalf("Close: %v", err)
	}
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := client.Read(make([]byte, 1)); err == nil {
		t.Fatal("a handed-out connection was still open after Close")
	}
	if _, ok := <-accepted; ok {
		t.Fatal("Accept handed out a connection after Close")
	}
}
