package agent

import "github.com/namecast/namecast/agent/rocketmq"

// startRocketMQ serves RocketMQ's NameServer protocol on cfg.RocketMQAddr,
// so that brokers and clients beside this agent use it as their NameServer
// (see package rocketmq); "off" or "" disables it. It must run after gossip
// has started: registrations become records gossip spreads.
func (a *Agent) startRocketMQ() error {
	addr := a.cfg.RocketMQAddr
	if addr == "" || addr == "off" {
		return nil
	}
	srv, err := rocketmq.NewServer(rocketmq.Config{
		MaxConns:      a.cfg.RocketMQMaxConns,
		MaxConnsPerIP: a.cfg.RocketMQMaxConnsPerIP,
		Host:          a.host.For("rocketmq"),
		Logger:        a.cfg.Logger.With("node", a.cfg.NodeName),
		Metrics:       a.metrics,
	})
	if err != nil {
		return err
	}
	// Off loopback is allowed, as a Java NameServer allows it, but the
	// protocol has no authentication: say so where the operator will see
	// it (docs/trust.md).
	if err := a.openDoor("rocketmq", addr, srv, "the RocketMQ NameServer port is reachable from the network and has no authentication: anyone who connects can register brokers and change topics cluster-wide; bind it to 127.0.0.1 unless the network is trusted"); err != nil {
		return err
	}
	a.rocketmq = srv
	return nil
}

// stopRocketMQ closes the NameServer listener and every broker and client
// connection, waiting for their goroutines. Brokers connected here are not
// unregistered one by one: leaving (or failing) withdraws all of this
// agent's records at once.
func (a *Agent) stopRocketMQ() error {
	if a.rocketmq == nil {
		return nil
	}
	return a.rocketmq.Close()
}

// RocketMQAddr is the address the RocketMQ NameServer protocol listens on
// (with the real port when configured as 0), or "" when it is off.
func (a *Agent) RocketMQAddr() string {
	if a.rocketmq == nil {
		return ""
	}
	return a.rocketmq.Addr()
}
