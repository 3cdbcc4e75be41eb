package consul

import (
	"fmt"
	"net"

	"github.com/namecast/namecast/agent/doorkit"
)

// DefaultAddr is where the door listens by default: Consul's HTTP port.
const DefaultAddr = "127.0.0.1:8500"

// DefaultDatacenter is the datacenter the door names (Consul's default).
const DefaultDatacenter = "dc1"

// ConsulSettings is the Consul door's block of the agent's configuration.
type ConsulSettings struct {
	// ConsulAddr serves Consul's HTTP API (Prometheus' consul_sd_configs,
	// Traefik, Spring Cloud Consul, consul/api clients); "off" disables.
	ConsulAddr string `json:"consul"`
	// ConsulDatacenter is the one datacenter the door answers for
	// (/v1/agent/self, every node and service); a query naming another
	// is refused as Consul refuses a datacenter it has no path to.
	// Default dc1 (config file only).
	ConsulDatacenter string `json:"consul_datacenter"`
	// ConsulMaxConns bounds the door's connections open at once (each
	// blocking query holds one); 0: DefaultMaxConns (config file only).
	ConsulMaxConns int `json:"consul_max_conns"`
}

const exposed = "the Consul port is reachable from the network and enforces no ACL tokens: anyone who connects can register services and write KV cluster-wide; bind it to 127.0.0.1 unless the network is trusted"

// Door serves Consul's HTTP API on this agent's registry.
func (s *ConsulSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name: "consul",
		Addr: &s.ConsulAddr,
		Defaults: func() {
			s.ConsulAddr, s.ConsulDatacenter = DefaultAddr, DefaultDatacenter
		},
		Validate: s.validate,
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			if !doorkit.On(s.ConsulAddr) {
				return nil, nil
			}
			ln, err := b.Bind("consul", "consul", s.ConsulAddr, exposed)
			return []net.Listener{ln}, err
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			ag, _ := env.Agent.(Agent)
			srv, err := New(Config{Host: env.Host, Agent: ag, Node: env.Node, Datacenter: s.ConsulDatacenter,
				MaxConns: s.ConsulMaxConns, Logger: env.Logger, Metrics: env.Metrics})
			if err != nil {
				return nil, err
			}
			if err := srv.Serve(lns[0]); err != nil {
				return nil, err
			}
			env.Logger.Info("door listening", "door", "consul", "addr", lns[0].Addr().String())
			return srv, nil
		},
	}
}

func (s *ConsulSettings) validate() error {
	if err := doorkit.CheckAddr("consul", s.ConsulAddr); err != nil {
		return err
	}
	if s.ConsulMaxConns == 0 {
		s.ConsulMaxConns = DefaultMaxConns
	}
	if s.ConsulDatacenter == "" {
		s.ConsulDatacenter = DefaultDatacenter
	}
	if !validDatacenter(s.ConsulDatacenter) {
		return fmt.Errorf("consul_datacenter %q must be letters, digits, '-' and '_' (at most 64)", s.ConsulDatacenter)
	}
	return nil
}

func validDatacenter(dc string) bool {
	if len(dc) > 64 {
		return false
	}
	for _, c := range dc {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Addrs is the address the door listens on (with the real port).
func (s *Server) Addrs() []doorkit.Addr { return []doorkit.Addr{{Name: "consul", Addr: s.Addr()}} }
