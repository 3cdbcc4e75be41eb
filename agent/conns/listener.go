package conns

import (
	"net"
	"sync"
)

// Listener hands the connections accepted on ln that are within the
// bounds to whoever accepts on the listener it returns: a server that runs
// its own goroutines, such as net/http's. open makes the set's value of a
// connection (for a Set[net.Conn], the connection itself); it is called
// on the accepting goroutine and must not block. A connection is
// forgotten, and makes room, when that server closes it; Close closes ln
// and every connection, but does not wait for the server's goroutines
// (the server's own Close does). After Close, Listener returns ErrClosed
// and does not take ln.
func (s *Set[C]) Listener(ln net.Listener, open func(net.Conn) C) (net.Listener, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.lns = append(s.lns, ln)
	return &admitting[C]{Listener: ln, s: s, open: open}, nil
}

// admitting is ln as Listener hands it out: it accepts only what the set
// lets in.
type admitting[C Conn] struct {
	net.Listener
	s    *Set[C]
	open func(net.Conn) C
}

// Accept waits for a connection the set lets in; refused ones are closed
// (Config.Refused told) and skipped. Once the set is closed it fails with
// net.ErrClosed, which net/http takes for the end of serving.
func (l *admitting[C]) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		c, v := l.s.admit(nc, l.open)
		switch v {
		case closing:
			return nil, net.ErrClosed
		case refused:
			continue
		}
		held := &heldConn[C]{Conn: nc, s: l.s, c: c}
		if cw, ok := nc.(closeWriter); ok {
			// net/http half-closes a connection it is done with when it
			// can (closeWriteAndWait); keep that ability visible.
			return &heldHalfCloser[C]{held, cw}, nil
		}
		return held, nil
	}
}

// heldConn is an admitted connection: closing it forgets it.
type heldConn[C Conn] struct {
	net.Conn
	s    *Set[C]
	c    C
	once sync.Once
}

func (h *heldConn[C]) Close() error {
	h.once.Do(func() { h.s.forget(h.c) })
	return h.Conn.Close()
}

type closeWriter interface{ CloseWrite() error }

type heldHalfCloser[C Conn] struct {
	*heldConn[C]
	cw closeWriter
}

func (h *heldHalfCloser[C]) CloseWrite() error { return h.cw.CloseWrite() }
