package dns

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/namecast/namecast/agent/doorkit"
)

// DefaultAddr is where the door listens by default, over UDP and TCP:
// Consul's DNS port.
const DefaultAddr = "127.0.0.1:8600"

// DNSSettings is the DNS door's block of the agent's configuration.
type DNSSettings struct {
	// DNSAddr serves Consul's DNS interface over UDP and TCP on one port
	// (--dns); "off" disables.
	DNSAddr string `json:"dns"`
	// DNSDomain is the zone answered (Consul's domain); default "consul".
	DNSDomain string `json:"dns_domain"`
	// DNSOnlyPassing leaves instances with a warning out of answers too
	// (Consul's dns_config.only_passing); by default only critical ones
	// are left out.
	DNSOnlyPassing bool `json:"dns_only_passing"`
	// DNSUDPAnswerLimit bounds the answers of a UDP reply to a query
	// without EDNS (Consul's dns_config.udp_answer_limit); default 3, at
	// most 8.
	DNSUDPAnswerLimit int `json:"dns_udp_answer_limit"`
	// DNSEnableTruncate sets the TC bit on a UDP reply that was cut, so
	// resolvers retry over TCP (Consul's dns_config.enable_truncate).
	DNSEnableTruncate bool `json:"dns_enable_truncate"`
}

const exposed = "the DNS port is reachable from the network: anyone who can reach it can list every service and node the cluster knows; bind it to 127.0.0.1 unless the network is trusted"

// Door serves Consul's DNS interface: the services every door registered,
// by name and tag, and the agents by node name.
func (s *DNSSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name: "dns",
		Addr: &s.DNSAddr,
		Defaults: func() {
			s.DNSAddr, s.DNSDomain, s.DNSUDPAnswerLimit = DefaultAddr, "consul", 3
		},
		Validate: s.validate,
		Bind:     s.bind,
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			srv, err := NewServer(ServerConfig{
				Answer: Config{Domain: s.DNSDomain, Datacenter: DefaultDatacenter, OnlyPassing: s.DNSOnlyPassing,
					UDPAnswerLimit: s.DNSUDPAnswerLimit, EnableTruncate: s.DNSEnableTruncate},
				Catalog: newHostCatalog(env.Host.Table(), env.Node, membersOf(env.Agent)), Logger: env.Logger, Metrics: env.Metrics})
			if err != nil {
				return nil, err
			}
			tcp, udp := lns[0], net.PacketConn(nil)
			if l, ok := tcp.(*withUDP); ok {
				tcp, udp = l.Listener, l.udp
			}
			if err := srv.Serve(tcp, udp); err != nil {
				return nil, err
			}
			env.Logger.Info("door listening", "door", "dns", "addr", tcp.Addr().String())
			return srv, nil
		},
	}
}

func (s *DNSSettings) validate() error {
	if err := doorkit.CheckAddr("dns", s.DNSAddr); err != nil {
		return err
	}
	if s.DNSDomain == "" {
		s.DNSDomain = "consul"
	}
	d := strings.TrimSuffix(s.DNSDomain, ".")
	if d == "" || strings.Contains(d, "..") || len(d) > 253 {
		return fmt.Errorf("dns_domain %q is not a domain name (Consul's is \"consul\")", s.DNSDomain)
	}
	if s.DNSUDPAnswerLimit == 0 {
		s.DNSUDPAnswerLimit = 3
	}
	if s.DNSUDPAnswerLimit < 0 || s.DNSUDPAnswerLimit > maxUDPAnswers {
		return fmt.Errorf("dns_udp_answer_limit %d must be from 1 to %d", s.DNSUDPAnswerLimit, maxUDPAnswers)
	}
	return nil
}

// bind binds the TCP listener through the agent's binder, then UDP on the
// same address and port (a listener on port 0 has its real port by
// then). An in-memory listener (tests) gets no UDP socket.
func (s *DNSSettings) bind(b doorkit.Binder) ([]net.Listener, error) {
	if !doorkit.On(s.DNSAddr) {
		return nil, nil
	}
	_, port, _ := doorkit.SplitHostPort(s.DNSAddr)
	for try := 1; ; try++ {
		ln, err := b.Bind("dns", "dns", s.DNSAddr, exposed)
		if err != nil {
			return nil, err
		}
		addr, ok := ln.Addr().(*net.TCPAddr)
		if !ok {
			return []net.Listener{ln}, nil
		}
		udp, err := net.ListenPacket("udp", addr.String())
		if err == nil {
			return []net.Listener{&withUDP{Listener: ln, udp: udp}}, nil
		}
		ln.Close()
		// Port 0: the port the kernel gave TCP may be another's over UDP
		// (a gossip port); take another.
		if port != 0 || try == bindTries {
			return nil, fmt.Errorf("dns port %s (UDP): %w (another DNS server may hold it; pick another address with --dns HOST:PORT, or turn the door off with --dns off)", addr, err)
		}
	}
}

// bindTries bounds the ports tried for a door configured on port 0.
const bindTries = 20

// withUDP is the door's TCP listener carrying its UDP socket from Bind to
// Start; closing it closes both (a door that never starts).
type withUDP struct {
	net.Listener
	udp net.PacketConn
}

func (l *withUDP) Close() error { return errors.Join(l.Listener.Close(), l.udp.Close()) }
