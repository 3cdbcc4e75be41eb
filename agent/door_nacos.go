package agent

import (
	"fmt"
	"net"
	"time"

	"github.com/namecast/namecast/agent/nacos"
)

// startNacos serves Nacos on cfg.NacosAddr: the 1.x HTTP API there and
// 2.x gRPC on the same host at the port + 1000, so Dubbo's nacos://
// registry and Spring Cloud Alibaba apps beside this agent use it as their
// Nacos (see package nacos); "off" or "" disables it. It must run after
// gossip has started. Unlike the other doors it serves two listeners, so
// it is opened here rather than by openDoor; the advice on a taken port
// is the same.
func (a *Agent) startNacos() error {
	addr := a.cfg.NacosAddr
	if addr == "" || addr == "off" {
		return nil
	}
	srv, err := nacos.NewServer(nacos.Config{
		Addr:    addr,
		Host:    a.host.For("nacos"),
		Grace:   a.nacosGrace(),
		Metrics: a.metrics,
		Logger:  a.cfg.Logger.With("node", a.cfg.NodeName),
	})
	if err != nil {
		return err
	}
	httpLn, err := a.listen("nacos", addr, true)
	if err != nil {
		return err
	}
	// Port 0 (tests) picks a free gRPC port too; otherwise gRPC is where
	// Nacos 2.x clients look for it, the real HTTP port + 1000.
	grpcAddr, _ := nacos.GRPCAddr(addr)
	if _, port, _ := net.SplitHostPort(addr); port != "0" {
		grpcAddr, _ = nacos.GRPCAddr(httpLn.Addr().String())
	}
	grpcLn, err := a.listenAs("nacos-grpc", "nacos", grpcAddr, true)
	if err != nil {
		httpLn.Close()
		return fmt.Errorf("the Nacos gRPC port is the --nacos port + %d, where Nacos 2.x clients look for it: %w", nacos.GRPCPortOffset, err)
	}
	srv.Serve(httpLn, grpcLn)
	if host, _, _ := splitHostPort(addr); !isLoopback(host) {
		a.log.Warn("the Nacos ports are reachable from the network and check no credentials: anyone who connects can register services and publish configs cluster-wide; bind them to 127.0.0.1 unless the network is trusted",
			"nacos", srv.Addr(), "grpc", srv.GRPCAddr())
	}
	a.nacos = srv
	return nil
}

// nacosGrace is the Nacos door's grace for a closed connection's
// ephemeral instances (--nacos-grace).
func (a *Agent) nacosGrace() time.Duration { return time.Duration(a.cfg.NacosGrace) }

func (a *Agent) stopNacos() error {
	if a.nacos == nil {
		return nil
	}
	return a.nacos.Close()
}

// NacosAddr is the address Nacos' HTTP API listens on (with the real port
// when configured as 0), or "" when the door is off.
func (a *Agent) NacosAddr() string {
	if a.nacos == nil {
		return ""
	}
	return a.nacos.Addr()
}

// NacosGRPCAddr is the address Nacos' gRPC listens on, or "" when the door
// is off.
func (a *Agent) NacosGRPCAddr() string {
	if a.nacos == nil {
		return ""
	}
	return a.nacos.GRPCAddr()
}

// Nacos is the Nacos door, or nil when it is off.
func (a *Agent) Nacos() *nacos.Server { return a.nacos }
