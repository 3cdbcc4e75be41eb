package agent

import (
	"time"

	"github.com/namecast/namecast/agent/zookeeper"
)

// startZooKeeper serves the ZooKeeper client protocol on cfg.ZooKeeperAddr,
// so Dubbo applications beside this agent use it as their registry,
// config center and metadata report (see package zookeeper); "off" or ""
// disables it. It must run after gossip has started.
func (a *Agent) startZooKeeper() error {
	addr := a.cfg.ZooKeeperAddr
	if addr == "" || addr == "off" {
		return nil
	}
	srv, err := zookeeper.NewServer(zookeeper.Config{
		Grace:          time.Duration(a.cfg.ZooKeeperGrace),
		DeleteHold:     time.Duration(a.cfg.ZooKeeperDeleteHold),
		MaxClientConns: a.cfg.ZooKeeperMaxClientConns,
		Host:           a.host.For("zookeeper"),
		ReadyWait:      readyAfter,
		Logger:         a.cfg.Logger.With("node", a.cfg.NodeName),
		Metrics:        a.metrics,
	})
	if err != nil {
		return err
	}
	if err := a.openDoor("zookeeper", addr, srv, "the ZooKeeper port is reachable from the network and enforces no ACLs: anyone who connects can register services and change rules cluster-wide; bind it to 127.0.0.1 unless the network is trusted"); err != nil {
		return err
	}
	a.zookeeper = srv
	return nil
}

func (a *Agent) stopZooKeeper() error {
	if a.zookeeper == nil {
		return nil
	}
	return a.zookeeper.Close()
}

// ZooKeeperAddr is the address the ZooKeeper protocol listens on (with the
// real port when configured as 0), or "" when it is off.
func (a *Agent) ZooKeeperAddr() string {
	if a.zookeeper == nil {
		return ""
	}
	return a.zookeeper.Addr()
}

// ZooKeeper is the ZooKeeper door (session operations for operators and
// tests), or nil when it is off.
func (a *Agent) ZooKeeper() *zookeeper.Server { return a.zookeeper }
