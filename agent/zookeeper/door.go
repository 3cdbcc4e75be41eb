package zookeeper

import (
	"fmt"
	"net"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
)

// DefaultAddr is where the door listens by default: ZooKeeper's client
// port.
const DefaultAddr = "127.0.0.1:2181"

// ZooKeeperSettings is the ZooKeeper door's block of the agent's configuration.
type ZooKeeperSettings struct {
	// ZooKeeperAddr serves the ZooKeeper client protocol (Dubbo's
	// zookeeper:// registry); "off" disables.
	ZooKeeperAddr string `json:"zookeeper"`
	// ZooKeeperGrace bounds how long a session whose connection closed
	// without closeSession lives on: min(session timeout, grace). Clients
	// sit on the agent's host, so a dropped connection means a dead
	// process; Dubbo's 60 s session timeout would keep a crashed provider
	// listed for a minute.
	ZooKeeperGrace doorkit.Duration `json:"zookeeper_grace"`
	// ZooKeeperDeleteHold is how long the delete of an ephemeral znode waits
	// before other agents hear of it, so a delete and re-create of the same
	// path (curator-x-discovery and dubbo-go re-register that way) shows
	// them no gap; the price is a real unregister reaching them that much
	// later. Default 500ms (config file only).
	ZooKeeperDeleteHold doorkit.Duration `json:"zookeeper_delete_hold"`
	// ZooKeeperMaxClientConns bounds the ZooKeeper connections open at once
	// from one client IP (ZooKeeper's maxClientCnxns); 0: its default, 60.
	// Every client on this host shares 127.0.0.1, so a host with more
	// ZooKeeper clients needs more; negative: no bound.
	ZooKeeperMaxClientConns int `json:"zookeeper_max_client_conns"`
}

const exposed = "the ZooKeeper port is reachable from the network and enforces no ACLs: anyone who connects can register services and change rules cluster-wide; bind it to 127.0.0.1 unless the network is trusted"

// Door serves the ZooKeeper client protocol, so Dubbo applications beside
// the agent use it as their registry, config center and metadata report.
func (s *ZooKeeperSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name: "zookeeper",
		Addr: &s.ZooKeeperAddr,
		Defaults: func() {
			s.ZooKeeperAddr, s.ZooKeeperGrace = DefaultAddr, doorkit.Duration(DefaultGrace)
		},
		Validate: s.validate,
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			if !doorkit.On(s.ZooKeeperAddr) {
				return nil, nil
			}
			ln, err := b.Bind("zookeeper", "zookeeper", s.ZooKeeperAddr, exposed)
			return []net.Listener{ln}, err
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			srv, err := NewServer(Config{Grace: time.Duration(s.ZooKeeperGrace), DeleteHold: time.Duration(s.ZooKeeperDeleteHold),
				MaxClientConns: s.ZooKeeperMaxClientConns, Host: env.Host, ReadyWait: env.ReadyWait, Logger: env.Logger, Metrics: env.Metrics})
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

func (s *ZooKeeperSettings) validate() error {
	if err := doorkit.CheckAddr("zookeeper", s.ZooKeeperAddr); err != nil {
		return err
	}
	if s.ZooKeeperGrace < 0 {
		return fmt.Errorf("--zookeeper-grace %v must not be negative", time.Duration(s.ZooKeeperGrace))
	}
	if s.ZooKeeperDeleteHold < 0 {
		return fmt.Errorf("zookeeper_delete_hold %v must not be negative", time.Duration(s.ZooKeeperDeleteHold))
	}
	if s.ZooKeeperGrace == 0 {
		s.ZooKeeperGrace = doorkit.Duration(DefaultGrace)
	}
	if s.ZooKeeperDeleteHold == 0 {
		s.ZooKeeperDeleteHold = doorkit.Duration(DefaultDeleteHold)
	}
	return nil
}

// Addrs is the address the door listens on (with the real port).
func (s *Server) Addrs() []doorkit.Addr { return []doorkit.Addr{{Name: "zookeeper", Addr: s.Addr()}} }
