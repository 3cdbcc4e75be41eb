package multicast

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"unsafe"
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

// routedInterface is the interface of the main table's route for group:
// the longest prefix holding it, the lowest metric among equals. (The
// source address the host picks for it would not do: a route through lo
// still takes the LAN address as source, lo's own being host-scoped.)
func routedInterface(group netip.AddrPort) (*net.Interface, error) {
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETROUTE, syscall.AF_INET)
	if err != nil {
		return nil, fmt.Errorf("reading the routes: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return nil, fmt.Errorf("reading the routes: %w", err)
	}
	best, bestLen, bestMetric := 0, -1, uint32(0)
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type != syscall.RTM_NEWROUTE || len(m.Data) < syscall.SizeofRtMsg {
			continue
		}
		rt := (*syscall.RtMsg)(unsafe.Pointer(&m.Data[0]))
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			continue
		}
		table, oif, metric := uint32(rt.Table), 0, uint32(0)
		dst := netip.IPv4Unspecified()
		for _, a := range attrs {
			switch a.Attr.Type {
			case syscall.RTA_TABLE:
				if len(a.Value) == 4 {
					table = binary.NativeEndian.Uint32(a.Value)
				}
			case syscall.RTA_OIF:
				if len(a.Value) == 4 {
					oif = int(binary.NativeEndian.Uint32(a.Value))
				}
			case syscall.RTA_PRIORITY:
				if len(a.Value) == 4 {
					metric = binary.NativeEndian.Uint32(a.Value)
				}
			case syscall.RTA_DST:
				if ip, ok := netip.AddrFromSlice(a.Value); ok {
					dst = ip
				}
			}
		}
		if table != syscall.RT_TABLE_MAIN || oif == 0 || rt.Type != syscall.RTN_UNICAST && rt.Type != syscall.RTN_MULTICAST {
			continue
		}
		p := netip.PrefixFrom(dst, int(rt.Dst_len))
		if !p.Contains(group.Addr()) {
			continue
		}
		if n := int(rt.Dst_len); n > bestLen || n == bestLen && metric < bestMetric {
			best, bestLen, bestMetric = oif, n, metric
		}
	}
	if best == 0 {
		return nil, fmt.Errorf("no route for %s (add one, as ip route add 224.0.0.0/4 dev IFACE, or name the interface with --multicast-interface)", group.Addr())
	}
	return net.InterfaceByIndex(best)
}
