package agenttest

import (
	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/gossip/gossiptest"
)

// WithNetwork carries every agent's gossip over n, an in-memory network
// with fault knobs, instead of UDP and TCP sockets; the HTTP API still
// listens on loopback. Each start of an agent, restarts included, attaches
// a new transport under the agent's name, so faults set by name follow the
// agent across restarts. Give it after WithProfile, which resets the
// memberlist tuning this option adds to.
func WithNetwork(n *gossiptest.Network) Option {
	return func(c *agent.Config) {
		name, prev := c.NodeName, c.TuneMemberlist
		c.TuneMemberlist = func(mc *memberlist.Config) {
			if prev != nil {
				prev(mc)
			}
			// memberlist's node name is the agent's (set by gossip), which
			// is the name the network keys faults by.
			mc.Transport = n.NewTransport(name)
		}
	}
}

// Name is the node name of slot i, running or not.
func (c *Cluster) Name(i int) string { return c.cfgs[i].NodeName }
