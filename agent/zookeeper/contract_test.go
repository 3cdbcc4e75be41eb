package zookeeper

import (
	"testing"

	"github.com/namecast/namecast/agent/doorkit/doortest"
)

// The door keeps the contract every door keeps with the agent.
func TestDoorContract(t *testing.T) { doortest.Contract(t, &ZooKeeperSettings{}) }
