package gossip

import (
	"errors"
	"fmt"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
)

// Incoming gossip streams are bounded here, in front of memberlist, which
// takes every stream a peer opens and sizes buffers from the headers it
// reads (20 MiB for a user message, a node array for a push/pull) without
// a limit of its own on how many are open. Without --encrypt anyone who
// reaches the port is a peer, so what one peer can make the agent hold is
// capped by the transport:
//
//   - MaxStreamsPerPeer streams open at once per remote IP, and MaxStreams
//     in all; a stream past either is closed as it arrives.
//   - StreamIdleTimeout: a read that gets no byte for that long fails, so a
//     peer cannot hold a stream (and what memberlist allocated for it) by
//     trickling bytes or sending none.
//   - MaxStreamBytes read per stream: past it reads fail, so one stream
//     cannot feed memberlist an unbounded amount.
//
// So one peer holds at most MaxStreamsPerPeer streams, each for as long as
// it keeps sending, each read capped at MaxStreamBytes: with the defaults
// 16 × 24 MiB instead of unbounded. Loopback peers are exempt from the
// per-peer count (in-process clusters and a host's own tools share one
// address, and whoever is on the host already reaches the HTTP API); the
// other bounds hold for them too.

// StreamLimits bounds incoming gossip streams; zero fields take defaults.
type StreamLimits struct {
	MaxStreamsPerPeer int           // default 16
	MaxStreams        int           // default 512
	StreamIdleTimeout time.Duration // default 10s
	MaxStreamBytes    int64         // default 24 MiB (memberlist's 20 MiB messages, plus framing)

	// loopbackToo applies MaxStreamsPerPeer to loopback peers (tests).
	loopbackToo bool
}

func (l StreamLimits) withDefaults() StreamLimits {
	if l.MaxStreamsPerPeer <= 0 {
		l.MaxStreamsPerPeer = 16
	}
	if l.MaxStreams <= 0 {
		l.MaxStreams = 512
	}
	if l.StreamIdleTimeout <= 0 {
		l.StreamIdleTimeout = 10 * time.Second
	}
	if l.MaxStreamBytes <= 0 {
		l.MaxStreamBytes = 24 << 20
	}
	return l
}

// limitedTransport is a memberlist transport whose incoming streams obey
// StreamLimits. Outgoing streams are ours and are not limited.
type limitedTransport struct {
	memberlist.NodeAwareTransport
	limits  StreamLimits
	refused func(reason string)
	streams chan net.Conn
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	err     error

	mu     sync.Mutex
	open   int
	byPeer map[string]int

	// plainPushPull sends push/pull as memberlist wrote it (tests
	// measuring what pushpull.go saves).
	plainPushPull bool
}

// limitStreams puts a limitedTransport in mc: around mc's transport when
// it has one (tests), else around a NetTransport bound as memberlist would
// bind it.
func (g *Gossip) limitStreams(mc *memberlist.Config) (*limitedTransport, error) {
	inner, ok := mc.Transport.(memberlist.NodeAwareTransport)
	if mc.Transport != nil && !ok {
		return nil, fmt.Errorf("gossip: the configured transport must implement memberlist.NodeAwareTransport")
	}
	if mc.Transport == nil {
		logger := mc.Logger
		if logger == nil {
			logger = log.New(mc.LogOutput, "", log.LstdFlags)
		}
		nc := &memberlist.NetTransportConfig{BindAddrs: []string{mc.BindAddr}, BindPort: mc.BindPort, Logger: logger}
		var nt *memberlist.NetTransport
		var err error
		// A dynamic port is bound for UDP and TCP separately, which can
		// race with another process: memberlist retries it ten times too.
		for range 10 {
			if nt, err = memberlist.NewNetTransport(nc); err == nil || mc.BindPort != 0 {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("could not set up network transport: %w", err)
		}
		if mc.BindPort == 0 {
			mc.BindPort = nt.GetAutoBindPort()
			mc.AdvertisePort = mc.BindPort
		}
		inner = nt
	}
	lt := newLimitedTransport(inner, g.cfg.Streams, func(reason string) {
		g.m.IncrCounter([]string{"gossip", "streams", "refused"}, 1)
		g.log.Debug("refused an incoming gossip stream", "reason", reason)
	})
	lt.plainPushPull = g.cfg.plainPushPull
	mc.Transport = lt
	return lt, nil
}

func newLimitedTransport(inner memberlist.NodeAwareTransport, l StreamLimits, refused func(string)) *limitedTransport {
	t := &limitedTransport{NodeAwareTransport: inner, limits: l.withDefaults(), refused: refused,
		streams: make(chan net.Conn), stop: make(chan struct{}), done: make(chan struct{}), byPeer: map[string]int{}}
	go t.accept()
	return t
}

func (t *limitedTransport) StreamCh() <-chan net.Conn { return t.streams }

// Shutdown stops the inner transport, then the accept loop. Safe to call
// more than once.
func (t *limitedTransport) Shutdown() error {
	t.once.Do(func() {
		t.err = t.NodeAwareTransport.Shutdown()
		close(t.stop)
		<-t.done
	})
	return t.err
}

func (t *limitedTransport) accept() {
	defer close(t.done)
	for {
		select {
		case conn := <-t.NodeAwareTransport.StreamCh():
			lc, reason := t.admit(conn)
			if lc == nil {
				_ = conn.Close()
				t.refused(reason)
				continue
			}
			select {
			case t.streams <- lc:
			case <-t.stop:
				_ = lc.Close()
				return
			}
		case <-t.stop:
			return
		}
	}
}

// admit counts conn in, or says why it is refused.
func (t *limitedTransport) admit(conn net.Conn) (*limitedConn, string) {
	peer := peerIP(conn.RemoteAddr())
	counted := t.limits.loopbackToo || !net.ParseIP(peer).IsLoopback()
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.open >= t.limits.MaxStreams:
		return nil, fmt.Sprintf("%d streams open in all", t.open)
	case counted && t.byPeer[peer] >= t.limits.MaxStreamsPerPeer:
		return nil, fmt.Sprintf("%d streams open from %s", t.byPeer[peer], peer)
	}
	t.open++
	if counted {
		t.byPeer[peer]++
	}
	return &limitedConn{Conn: conn, t: t, peer: peer, counted: counted, left: t.limits.MaxStreamBytes}, ""
}

func (t *limitedTransport) release(c *limitedConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open--
	if c.counted {
		if t.byPeer[c.peer]--; t.byPeer[c.peer] <= 0 {
			delete(t.byPeer, c.peer)
		}
	}
}

// openStreams is how many incoming streams are open (tests).
func (t *limitedTransport) openStreams() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open
}

func peerIP(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

var errStreamTooLong = errors.New("gossip: stream is over the per-stream byte limit")

// limitedConn is one admitted stream: reads are capped in bytes and each
// must progress within the idle timeout, whatever deadline memberlist set
// (the earlier of the two applies).
type limitedConn struct {
	net.Conn
	t       *limitedTransport
	peer    string
	counted bool
	left    int64

	deadline atomic.Int64 // memberlist's read deadline, Unix ns; 0: none
	closed   sync.Once
}

func (c *limitedConn) Read(b []byte) (int, error) {
	if c.left <= 0 {
		return 0, errStreamTooLong
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	d := time.Now().Add(c.t.limits.StreamIdleTimeout)
	if own := c.deadline.Load(); own != 0 && own < d.UnixNano() {
		d = time.Unix(0, own)
	}
	_ = c.Conn.SetReadDeadline(d)
	n, err := c.Conn.Read(b)
	c.left -= int64(n)
	return n, err
}

func (c *limitedConn) Write(b []byte) (int, error) { return c.t.writeMsg(c.Conn, b) }

func (c *limitedConn) SetDeadline(d time.Time) error {
	c.setOwn(d)
	return c.Conn.SetDeadline(d)
}

func (c *limitedConn) SetReadDeadline(d time.Time) error {
	c.setOwn(d)
	return c.Conn.SetReadDeadline(d)
}

func (c *limitedConn) setOwn(d time.Time) {
	if d.IsZero() {
		c.deadline.Store(0)
	} else {
		c.deadline.Store(d.UnixNano())
	}
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(func() { c.t.release(c) })
	return err
}
