package listener

import (
	"context"
	"net"
	"sync"
)

// Memory is a net.Listener with no socket: Dial hands it one end of a
// net.Pipe. Tests give doors these (agent.Config.Listen) to serve without a
// port.
type Memory struct {
	addr  memAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// NewMemory makes a listener whose address is "mem:" and name.
func NewMemory(name string) *Memory {
	return &Memory{addr: memAddr("mem:" + name), conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a Dial, or for Close.
func (m *Memory) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and Dial fail from now on.
func (m *Memory) Close() error {
	m.once.Do(func() { close(m.done) })
	return nil
}

// Addr is "mem:" and the listener's name.
func (m *Memory) Addr() net.Addr { return m.addr }

// Dial connects to the listener, waiting until it accepts, ctx ends or it
// closes.
func (m *Memory) Dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case m.conns <- server:
		return client, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-m.done:
		return nil, net.ErrClosed
	}
}

type memAddr string

func (a memAddr) Network() string { return "memory" }
func (a memAddr) String() string  { return string(a) }
