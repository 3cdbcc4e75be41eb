package multicast

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// Sockets are the door's two UDP sockets on its host, bound before the
// agent joins its cluster (doorkit's contract: a taken or unusable group
// fails the start). They stand in the door registry as its listener:
// Accept is never called, Addr is the group and port, and Close closes
// both.
//
//   - recv is bound to the group address itself, not to the wildcard as
//     Dubbo's sockets are, and has joined the group on the interface: it
//     receives the group's datagrams and nothing sent to the host's
//     address, so a Dubbo provider's unicast answer to a subscriber on
//     this host (to HOST:PORT) is never taken by the agent instead.
//   - send, on an ephemeral port, sends the door's answers and
//     announcements, multicast with TTL 0: delivered to this host's
//     members of the group (loopback on), never onto a network. Its port
//     tells the door's own announcements, which come back to recv, from
//     the host's processes, which all send from the group port.
type Sockets struct {
	recv, send *net.UDPConn
	group      netip.AddrPort // with the port bound
	ifName     string
	closeOnce  sync.Once
	closed     chan struct{}
}

// Listen opens the door's sockets for group on the interface named ifName
// ("": the one the host routes group through).
func Listen(group netip.AddrPort, ifName string) (*Sockets, error) {
	ifi, err := groupInterface(group, ifName)
	if err != nil {
		return nil, err
	}
	recv, port, err := listenGroup(group, ifi)
	if err != nil {
		return nil, err
	}
	send, err := listenSend(ifi)
	if err != nil {
		recv.Close()
		return nil, err
	}
	return &Sockets{recv: recv, send: send, group: netip.AddrPortFrom(group.Addr(), port), ifName: ifi.Name,
		closed: make(chan struct{})}, nil
}

// groupInterface is the interface named name, or the one the host routes
// group through; it must be up and do multicast.
func groupInterface(group netip.AddrPort, name string) (*net.Interface, error) {
	var ifi *net.Interface
	if name != "" {
		var err error
		if ifi, err = net.InterfaceByName(name); err != nil {
			return nil, fmt.Errorf("--multicast-interface %s: %v", name, err)
		}
	} else {
		var err error
		if ifi, err = routedInterface(group); err != nil {
			return nil, err
		}
	}
	switch {
	case ifi.Flags&net.FlagUp == 0:
		return nil, fmt.Errorf("interface %s is down", ifi.Name)
	case ifi.Flags&net.FlagMulticast == 0:
		return nil, fmt.Errorf("interface %s does not do multicast (ip link set %s multicast on), or name another with --multicast-interface", ifi.Name, ifi.Name)
	}
	return ifi, nil
}

// Accept blocks until the sockets close: the door reads datagrams, not
// connections.
func (s *Sockets) Accept() (net.Conn, error) {
	<-s.closed
	return nil, net.ErrClosed
}

// Addr is the group and its port.
func (s *Sockets) Addr() net.Addr { return net.UDPAddrFromAddrPort(s.group) }

// Close closes both sockets; safe more than once.
func (s *Sockets) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		err = errors.Join(s.recv.Close(), s.send.Close())
	})
	return err
}

// sendPort is the port the door's datagrams come from.
func (s *Sockets) sendPort() uint16 { return s.send.LocalAddr().(*net.UDPAddr).AddrPort().Port() }
