//go:build !linux

package multicast

import (
	"errors"
	"net"
	"net/netip"
)

var errLinuxOnly = errors.New("the multicast door runs on Linux only (it binds the group address and sets TTL 0 with Linux socket options)")

func listenGroup(netip.AddrPort, *net.Interface) (*net.UDPConn, uint16, error) {
	return nil, 0, errLinuxOnly
}

func listenSend(*net.Interface) (*net.UDPConn, error) { return nil, errLinuxOnly }

func routedInterface(netip.AddrPort) (*net.Interface, error) { return nil, errLinuxOnly }
