package multicast

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
)

// DubboAddr is Dubbo's documented multicast registry address
// (multicast://224.5.6.7:1234), what --multicast takes to serve Dubbo
// applications left at their examples' setting.
const DubboAddr = "224.5.6.7:1234"

// MulticastSettings is the multicast door's block of the agent's
// configuration.
type MulticastSettings struct {
	// MulticastAddr is the group and port of Dubbo's multicast registry
	// the door joins on this host (GROUP:PORT, an IPv4 multicast group);
	// "off" (the default) disables. Port 0 picks a free port (tests).
	MulticastAddr string `json:"multicast"`
	// MulticastInterface names the interface the door joins the group on
	// and announces through; empty: the one the host routes the group
	// through (ip route get GROUP), where the host's Dubbo processes send.
	MulticastInterface string `json:"multicast_interface"`
	// MulticastProbe is how often each provider registered through the
	// door is checked: a provider whose port refuses two TCP connects
	// 100 ms apart is withdrawn, as Dubbo's admin cleanup does. Default
	// DefaultProbe; shorter finds dead providers sooner for more connects.
	MulticastProbe doorkit.Duration `json:"multicast_probe"`
	// MulticastMaxPerSender bounds the registrations the door holds for
	// one sending address (every process of a host sends from the host's
	// address); 0: DefaultMaxPerSender. Past it, a register is refused
	// (counted and logged); the agent's record budget bounds them all.
	MulticastMaxPerSender int `json:"multicast_max_per_sender"`
}

// Door serves Dubbo's multicast registry on this host's group, so that
// Dubbo applications configured with multicast://GROUP:PORT register and
// subscribe through the agent, across subnets.
func (s *MulticastSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name:     "multicast",
		Addr:     &s.MulticastAddr,
		Defaults: func() { s.MulticastAddr, s.MulticastProbe = "off", doorkit.Duration(DefaultProbe) },
		Validate: s.validate,
		Bind: func(doorkit.Binder) ([]net.Listener, error) {
			if !doorkit.On(s.MulticastAddr) {
				return nil, nil
			}
			group, _ := parseGroup(s.MulticastAddr)
			socks, err := Listen(group, s.MulticastInterface)
			if err != nil {
				return nil, fmt.Errorf("multicast group %s: %w (pick another with --multicast GROUP:PORT, or turn the door off with --multicast off)", s.MulticastAddr, err)
			}
			return []net.Listener{socks}, nil
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			srv := NewServer(Config{Host: env.Host, Probe: time.Duration(s.MulticastProbe), MaxPerSender: s.MulticastMaxPerSender,
				Logger: env.Logger, Metrics: env.Metrics})
			srv.Serve(lns[0].(*Sockets))
			env.Logger.Info("door listening", "door", "multicast", "addr", s.MulticastAddr)
			return srv, nil
		},
	}
}

func (s *MulticastSettings) validate() error {
	if !doorkit.On(s.MulticastAddr) {
		return nil
	}
	if _, err := parseGroup(s.MulticastAddr); err != nil {
		return fmt.Errorf("--multicast %q: %v (Dubbo's default is %s; or \"off\")", s.MulticastAddr, err, DubboAddr)
	}
	if s.MulticastProbe < 0 {
		return fmt.Errorf("--multicast-probe %v must not be negative", time.Duration(s.MulticastProbe))
	}
	if s.MulticastMaxPerSender < 0 {
		return fmt.Errorf("multicast_max_per_sender %d must not be negative", s.MulticastMaxPerSender)
	}
	if s.MulticastProbe == 0 {
		s.MulticastProbe = doorkit.Duration(DefaultProbe)
	}
	if s.MulticastMaxPerSender == 0 {
		s.MulticastMaxPerSender = DefaultMaxPerSender
	}
	return nil
}

// parseGroup reads GROUP:PORT: an IPv4 multicast group (Dubbo's
// 224.0.0.0-239.255.255.255) and a port.
func parseGroup(addr string) (netip.AddrPort, error) {
	host, port, err := doorkit.SplitHostPort(addr)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Is4() || !ip.IsMulticast() {
		return netip.AddrPort{}, fmt.Errorf("%q is not an IPv4 multicast group (224.0.0.0 to 239.255.255.255)", host)
	}
	return netip.AddrPortFrom(ip, uint16(port)), nil
}

// Addrs is the group the door joined, with its port.
func (s *Server) Addrs() []doorkit.Addr {
	return []doorkit.Addr{{Name: "multicast", Addr: s.socks.Addr().String()}}
}
