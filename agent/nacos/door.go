package nacos

import (
	"fmt"
	"net"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
)

// DefaultAddr is where the door's HTTP API listens by default: Nacos'
// port (its gRPC is 1000 above).
const DefaultAddr = "127.0.0.1:8848"

// NacosSettings is the Nacos door's block of the agent's configuration.
type NacosSettings struct {
	// NacosAddr serves Nacos' 1.x HTTP API, and its 2.x gRPC on the same
	// host at the port + 1000 (what Nacos 2.x clients assume); "off"
	// disables. Port 0 picks two free ports (tests).
	NacosAddr string `json:"nacos"`
	// NacosGrace is how long the ephemeral instances of a Nacos gRPC
	// connection that closed (its process exited or was killed, or the
	// agent restarted) stay: a client that reconnects and re-registers
	// within it (Nacos clients redo their registrations on reconnect)
	// shows its consumers no gap; otherwise they are withdrawn. Its own
	// flag, not --zookeeper-grace: the doors serve different clients, and
	// Nacos' own server withdraws at once, so an operator may want it
	// shorter.
	NacosGrace doorkit.Duration `json:"nacos_grace"`
}

const exposed = "the Nacos ports are reachable from the network and check no credentials: anyone who connects can register services and publish configs cluster-wide; bind them to 127.0.0.1 unless the network is trusted"

// Door serves Nacos: the 1.x HTTP API at NacosAddr and 2.x gRPC on the
// same host at the port + 1000, so Dubbo's nacos:// registry and Spring
// Cloud Alibaba apps beside the agent use it as their Nacos.
func (s *NacosSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name:     "nacos",
		Addr:     &s.NacosAddr,
		Defaults: func() { s.NacosAddr, s.NacosGrace = DefaultAddr, doorkit.Duration(DefaultGrace) },
		Validate: s.validate,
		Bind:     s.bind,
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			srv, err := NewServer(Config{Addr: s.NacosAddr, Host: env.Host, Grace: time.Duration(s.NacosGrace),
				Metrics: env.Metrics, Logger: env.Logger})
			if err != nil {
				return nil, err
			}
			srv.Serve(lns[0], lns[1])
			return srv, nil
		},
	}
}

// bind binds the HTTP port, then gRPC 1000 above it: where Nacos 2.x
// clients look for it. Port 0 (tests) picks a free gRPC port too.
func (s *NacosSettings) bind(b doorkit.Binder) ([]net.Listener, error) {
	if !doorkit.On(s.NacosAddr) {
		return nil, nil
	}
	httpLn, err := b.Bind("nacos", "nacos", s.NacosAddr, exposed)
	if err != nil {
		return nil, err
	}
	grpcAddr, _ := GRPCAddr(s.NacosAddr)
	if _, port, _ := net.SplitHostPort(s.NacosAddr); port != "0" {
		grpcAddr, _ = GRPCAddr(httpLn.Addr().String())
	}
	grpcLn, err := b.Bind("nacos-grpc", "nacos", grpcAddr, "")
	if err != nil {
		httpLn.Close()
		return nil, fmt.Errorf("the Nacos gRPC port is the --nacos port + %d, where Nacos 2.x clients look for it: %w", GRPCPortOffset, err)
	}
	return []net.Listener{httpLn, grpcLn}, nil
}

func (s *NacosSettings) validate() error {
	if err := doorkit.CheckAddr("nacos", s.NacosAddr); err != nil {
		return err
	}
	if doorkit.On(s.NacosAddr) {
		if _, err := GRPCAddr(s.NacosAddr); err != nil { // the gRPC port, +1000, must be a port
			return fmt.Errorf("--nacos %q: %v", s.NacosAddr, err)
		}
	}
	if s.NacosGrace < 0 {
		return fmt.Errorf("--nacos-grace %v must not be negative", time.Duration(s.NacosGrace))
	}
	if s.NacosGrace == 0 {
		s.NacosGrace = doorkit.Duration(DefaultGrace)
	}
	return nil
}

// Addrs are the addresses of the HTTP API and of gRPC (with the real
// ports).
func (s *Server) Addrs() []doorkit.Addr {
	return []doorkit.Addr{{Name: "nacos", Addr: s.Addr()}, {Name: "nacos-grpc", Addr: s.GRPCAddr()}}
}
