package multicast

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
)

// listenGroup binds a socket to the group address and port (SO_REUSEADDR,
// as Dubbo's MulticastSocket sets it, so that the host's Dubbo processes
// bind the port beside it) and joins the group on ifi. It returns the
// port bound (group's, or a free one for 0).
func listenGroup(group netip.AddrPort, ifi *net.Interface) (*net.UDPConn, uint16, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_UDP)
	if err != nil {
		return nil, 0, err
	}
	ok := false
	defer func() {
		if !ok {
			syscall.Close(fd)
		}
	}()
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return nil, 0, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(group.Port()), Addr: group.Addr().As4()}); err != nil {
		return nil, 0, fmt.Errorf("bind: %w", err)
	}
	mreq := &syscall.IPMreqn{Multiaddr: group.Addr().As4(), Ifindex: int32(ifi.Index)}
	if err := syscall.SetsockoptIPMreqn(fd, syscall.IPPROTO_IP, syscall.IP_ADD_MEMBERSHIP, mreq); err != nil {
		return nil, 0, fmt.Errorf("join %s on %s: %w", group.Addr(), ifi.Name, err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return nil, 0, err
	}
	ok = true // fileConn owns fd from here
	c, err := fileConn(fd, "multicast-recv")
	if err != nil {
		return nil, 0, err
	}
	return c, uint16(sa.(*syscall.SockaddrInet4).Port), nil
}

// listenSend opens the socket the door sends from: an ephemeral port,
// multicast out of ifi with TTL 0 (the host only) and loopback on.
func listenSend(ifi *net.Interface) (*net.UDPConn, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{})
	if err != nil {
		return nil, err
	}
	rc, err := c.SyscallConn()
	if err != nil {
		c.Close()
		return nil, err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		s := int(fd)
		if serr = syscall.SetsockoptInt(s, syscall.IPPROTO_IP, syscall.IP_MULTICAST_TTL, 0); serr != nil {
			return
		}
		if serr = syscall.SetsockoptInt(s, syscall.IPPROTO_IP, syscall.IP_MULTICAST_LOOP, 1); serr != nil {
			return
		}
		serr = syscall.SetsockoptIPMreqn(s, syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, &syscall.IPMreqn{Ifindex: int32(ifi.Index)})
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("multicast options on the sending socket: %w", err)
	}
	return c, nil
}

func fileConn(fd int, name string) (*net.UDPConn, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close() // FilePacketConn dups it
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
