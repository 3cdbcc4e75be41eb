package rocketmq

import (
	"net"

	"github.com/namecast/namecast/agent/doorkit"
)

// DefaultAddr is where the door listens by default: the NameServer's port.
const DefaultAddr = "127.0.0.1:9876"

// RocketMQSettings is the RocketMQ door's block of the agent's configuration.
type RocketMQSettings struct {
	// RocketMQAddr serves the RocketMQ NameServer protocol; "off" disables.
	RocketMQAddr string `json:"rocketmq"`
	// RocketMQMaxConns bounds the RocketMQ connections open at once, and
	// RocketMQMaxConnsPerIP those from one client IP; 0: the defaults,
	// 10,000 and 1,000; negative: no bound. A RocketMQ client process
	// keeps one connection to its NameServer, so these stop a flood, not
	// real use; every client on this host shares 127.0.0.1.
	RocketMQMaxConns      int `json:"rocketmq_max_conns"`
	RocketMQMaxConnsPerIP int `json:"rocketmq_max_conns_per_ip"`
}

// exposed is logged when the door listens off loopback. It is allowed, as
// a Java NameServer allows it, but the protocol has no authentication
// (docs/trust.md).
const exposed = "the RocketMQ NameServer port is reachable from the network and has no authentication: anyone who connects can register brokers and change topics cluster-wide; bind it to 127.0.0.1 unless the network is trusted"

// Door serves RocketMQ's NameServer protocol, so that brokers and clients
// beside the agent use it as their NameServer. Brokers connected here are
// not unregistered one by one at Close: leaving (or failing) withdraws all
// of the agent's records at once.
func (s *RocketMQSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name:     "rocketmq",
		Addr:     &s.RocketMQAddr,
		Defaults: func() { s.RocketMQAddr = DefaultAddr },
		Validate: s.validate,
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			if !doorkit.On(s.RocketMQAddr) {
				return nil, nil
			}
			ln, err := b.Bind("rocketmq", "rocketmq", s.RocketMQAddr, exposed)
			return []net.Listener{ln}, err
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			srv, err := NewServer(Config{MaxConns: s.RocketMQMaxConns, MaxConnsPerIP: s.RocketMQMaxConnsPerIP,
				Host: env.Host, Logger: env.Logger, Metrics: env.Metrics})
			if err != nil {
				return nil, err
			}
			if err := srv.Serve(lns[0]); err != nil {
				return nil, err
			}
			return srv, nil
		},
	}
}

func (s *RocketMQSettings) validate() error {
	if err := doorkit.CheckAddr("rocketmq", s.RocketMQAddr); err != nil {
		return err
	}
	if s.RocketMQMaxConns == 0 {
		s.RocketMQMaxConns = DefaultMaxConns
	}
	if s.RocketMQMaxConnsPerIP == 0 {
		s.RocketMQMaxConnsPerIP = DefaultMaxConnsPerIP
	}
	return nil
}

// Addrs is the address the door listens on (with the real port).
func (s *Server) Addrs() []doorkit.Addr { return []doorkit.Addr{{Name: "rocketmq", Addr: s.Addr()}} }
