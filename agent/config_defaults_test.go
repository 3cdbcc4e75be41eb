package agent

import (
	"testing"
	"time"

	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/agent/rocketmq"
	"github.com/namecast/namecast/agent/zookeeper"
)

// TestConfigShowsDefaultsInForce: a setting left at zero reads as the
// default the agent runs with, so /v1/agent and the web UI's Agent page
// never show zookeeper_delete_hold 0s while 500ms is in force.
func TestConfigShowsDefaultsInForce(t *testing.T) {
	c := Config{NodeName: "n", BindAddr: "127.0.0.1:0"}
	c.HTTPAddr = "127.0.0.1:0"
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(c.ZooKeeperDeleteHold); got != zookeeper.DefaultDeleteHold {
		t.Errorf("zookeeper_delete_hold = %v, want the default %v", got, zookeeper.DefaultDeleteHold)
	}
	if c.RulesLimit != DefaultRulesLimit {
		t.Errorf("rules_limit = %d, want the default %d", c.RulesLimit, DefaultRulesLimit)
	}
	if got := time.Duration(c.ZooKeeperGrace); got != zookeeper.DefaultGrace {
		t.Errorf("zookeeper_grace = %v, want the default %v", got, zookeeper.DefaultGrace)
	}
	if c.RocketMQMaxConns != rocketmq.DefaultMaxConns || c.RocketMQMaxConnsPerIP != rocketmq.DefaultMaxConnsPerIP {
		t.Errorf("rocketmq_max_conns = %d, rocketmq_max_conns_per_ip = %d; want the defaults %d and %d",
			c.RocketMQMaxConns, c.RocketMQMaxConnsPerIP, rocketmq.DefaultMaxConns, rocketmq.DefaultMaxConnsPerIP)
	}
	if c.HTTPMaxConns != httpapi.DefaultMaxConns {
		t.Errorf("http_max_conns = %d, want the default %d", c.HTTPMaxConns, httpapi.DefaultMaxConns)
	}
	if got := time.Duration(c.NacosGrace); got != nacos.DefaultGrace {
		t.Errorf("nacos_grace = %v, want the default %v", got, nacos.DefaultGrace)
	}
}
