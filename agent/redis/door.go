package redis

import (
	"fmt"
	"net"

	"github.com/namecast/namecast/agent/doorkit"
)

// DubboAddr is where Dubbo's redis:// registry looks by default
// (redis://127.0.0.1:6379); the door is off unless --redis names it,
// since most servers already run a Redis there.
const DubboAddr = "127.0.0.1:6379"

// RedisSettings is the Redis door's block of the agent's configuration.
type RedisSettings struct {
	// RedisAddr serves the Redis protocol (RESP2) for Dubbo's redis://
	// registry; "off" (the default) disables.
	RedisAddr string `json:"redis"`
	// RedisPassword, when set, is required by AUTH as Redis' requirepass
	// (Dubbo's registry password); config file only.
	RedisPassword string `json:"redis_password,omitempty"`
	// RedisMaxClients bounds the Redis connections open at once (Redis'
	// maxclients); 0: 1000.
	RedisMaxClients int `json:"redis_max_clients,omitempty"`
	// RedisMaxSubscriptions bounds the channels and patterns one
	// connection subscribes to; 0: 1024.
	RedisMaxSubscriptions int `json:"redis_max_subscriptions,omitempty"`
}

const exposed = "the Redis port is reachable from the network: anyone who connects can register and withdraw Dubbo services cluster-wide (set redis_password, or bind it to 127.0.0.1 unless the network is trusted)"

// Door serves the Redis protocol, so Dubbo applications beside the agent
// use it as their redis:// registry.
func (s *RedisSettings) Door() doorkit.Spec {
	return doorkit.Spec{
		Name:     "redis",
		Addr:     &s.RedisAddr,
		Defaults: func() { s.RedisAddr = "off" },
		Validate: s.validate,
		Redact: func(redacted string) {
			if s.RedisPassword != "" {
				s.RedisPassword = redacted
			}
		},
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			if !doorkit.On(s.RedisAddr) {
				return nil, nil
			}
			ex := exposed
			if s.RedisPassword != "" {
				ex = "the Redis port is reachable from the network: anyone with redis_password can register and withdraw Dubbo services cluster-wide"
			}
			ln, err := b.Bind("redis", "redis", s.RedisAddr, ex)
			return []net.Listener{ln}, err
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			srv := NewServer(Config{Host: env.Host, Password: s.RedisPassword, MaxClients: s.RedisMaxClients,
				MaxSubscriptions: s.RedisMaxSubscriptions, ReadyWait: env.ReadyWait, Logger: env.Logger, Metrics: env.Metrics})
			if err := srv.Serve(lns[0]); err != nil {
				return nil, err
			}
			return srv, nil
		},
	}
}

func (s *RedisSettings) validate() error {
	if s.RedisAddr == "" {
		s.RedisAddr = "off"
	}
	if err := doorkit.CheckAddr("redis", s.RedisAddr); err != nil {
		return err
	}
	if s.RedisMaxClients < 0 {
		return fmt.Errorf("redis_max_clients %d must not be negative", s.RedisMaxClients)
	}
	if s.RedisMaxSubscriptions < 0 {
		return fmt.Errorf("redis_max_subscriptions %d must not be negative", s.RedisMaxSubscriptions)
	}
	return nil
}
