package httpapi

import (
	"testing"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/doorkit/doortest"
)

// The door keeps the contract every door keeps with the agent.
func TestDoorContract(t *testing.T) {
	doortest.Contract(t, &HTTPSettings{}, doortest.WithEnv(func(e *doorkit.Env) { e.Agent = loneAgent{} }))
}
