package agent

import (
	"fmt"
	"net"

	"github.com/namecast/namecast/agent/host"
)

// A door is one protocol the agent serves its clients with: the HTTP API
// and web UI (package httpapi), RocketMQ's NameServer protocol (package
// rocketmq), ZooKeeper's (package zookeeper) and Nacos' (package nacos,
// which serves two listeners: see door_nacos.go). Each keeps its own
// protocol state (connections, sessions, TTLs) and turns it into records
// through the host the agent gives every door (package host), and each
// keeps the same contract with the agent:
//
//   - Serve(ln) serves the door's protocol on ln and returns at once. The
//     agent binds ln (Config.Listen; tests hand in in-memory listeners),
//     and from then on the door owns it. Before it serves, the door takes
//     back the leases it held before a restart (package lease), so that
//     the agent can then withdraw those no door claimed.
//   - Addr is the address the door serves on (its listener's, with the
//     real port).
//   - Close stops accepting, closes every connection and waits for every
//     goroutine the door started. It withdraws nothing: the agent is going
//     away, and its records go with it (or come back with its restart).
//     Safe to call more than once.
//
// The connections a door accepts are a conns.Set (package conns) in the
// RocketMQ, ZooKeeper and Nacos gRPC doors: it refuses a connection past
// the door's bound, in the door's words (ZooKeeper: MaxClientConns from
// one client IP, 60 by default, as its maxClientCnxns; Nacos gRPC:
// MaxConns in all; RocketMQ: MaxConns in all, 10,000, and MaxConnsPerIP,
// 1,000, where Java's NameServer has none), and its Close is how the
// door's Close closes the listener and every connection. The HTTP door's
// connections are one too (MaxConns in all, 10,000), handed to net/http
// through the set's listener; the Nacos door's HTTP port's are net/http's
// alone.
type door interface {
	Serve(ln net.Listener) error
	Addr() string
	Close() error
}

// Host is what the agent gives every door (package host): changes, views,
// readiness and leases. Nil before Start.
func (a *Agent) Host() host.Host { return a.host }

// startHost makes the doors' host once gossip runs (its changes are
// gossiped).
func (a *Agent) startHost() {
	a.host = host.New(host.Config{Table: a.table, Leases: a.leases, Publish: a.gossip.Publish, RTT: a.gossip.RTT,
		Rules: a.applyRules, Ready: a.Ready, Metrics: a.metrics, Logger: a.log, Budget: a.cfg.budget()})
}

// listen binds addr for the door whose flag is --name: with Config.Listen
// when set, else on TCP. off says whether the door can be turned off, for
// the error's advice.
func (a *Agent) listen(name, addr string, off bool) (net.Listener, error) {
	return a.listenAs(name, name, addr, off)
}

// listenAs is listen for a door's listener named door for Config.Listen
// ("nacos-grpc") whose address is set by the flag --name.
func (a *Agent) listenAs(door, name, addr string, off bool) (net.Listener, error) {
	listen := a.cfg.Listen
	if listen == nil {
		listen = func(_, addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
	}
	ln, err := listen(door, addr)
	if err != nil {
		advice := fmt.Sprintf("another agent or server may hold it; pick another address with --%s HOST:PORT", name)
		if off {
			advice += fmt.Sprintf(", or turn the door off with --%s off", name)
		}
		return nil, fmt.Errorf("%s port %s: %w (%s)", door, addr, err, advice)
	}
	return ln, nil
}

// openDoor binds addr for the door whose flag is --name and serves d on
// it. exposed, when addr is reachable from the network, is logged as a
// warning: what anyone who connects can then do.
func (a *Agent) openDoor(name, addr string, d door, exposed string) error {
	ln, err := a.listen(name, addr, true)
	if err != nil {
		return err
	}
	if err := d.Serve(ln); err != nil {
		ln.Close()
		return err
	}
	if host, _, _ := splitHostPort(addr); exposed != "" && !isLoopback(host) {
		a.log.Warn(exposed, name, d.Addr())
	}
	return nil
}
