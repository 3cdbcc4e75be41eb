package chaos

import "github.com/namecast/namecast/gossip/gossiptest"

// System is a cluster a run drives: a fixed set of node slots, each running
// or down, whose gossip goes over one gossiptest.Network. Methods are
// called from the run's goroutine only.
type System interface {
	// Names lists every slot's node name, in slot order.
	Names() []string
	Running(i int) bool
	// Crash stops node i without leaving, as a killed process.
	Crash(i int)
	// Leave makes node i leave gracefully, then stop.
	Leave(i int)
	// Restart starts node i again under its name with a new incarnation
	// and joins it to a running node.
	Restart(i int) error
	// Register and Unregister are a client's calls to node i.
	Register(i int, r Registration) error
	Unregister(i int, r Registration) (bool, error)
	// Replicas are the running nodes, for Check.
	Replicas() []Replica
	Network() *gossiptest.Network
}
