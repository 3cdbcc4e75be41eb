package redis

import (
	"testing"

	"github.com/namecast/namecast/agent/doorkit/doortest"
)

// The contract every door keeps with the agent (package doorkit).
func TestDoorContract(t *testing.T) { doortest.Contract(t, &RedisSettings{}) }

// The door started as the agent starts it, from its settings.
func TestDoorFromSettings(t *testing.T) {
	d := doortest.Start(t, &RedisSettings{RedisPassword: "pw"})
	c := dialClient(t, tcp(d.Addr("redis")))
	if got := c.do("PING"); got != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("PING before AUTH with redis_password: %q", got)
	}
}
