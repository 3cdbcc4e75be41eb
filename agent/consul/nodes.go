package consul

import (
	"crypto/sha256"
	"fmt"
	"net"
	"sort"

	"github.com/namecast/namecast/gossip"
)

// node is one agent as Consul's api.Node shows it.
type node struct {
	ID              string
	Node            string
	Address         string
	Datacenter      string
	TaggedAddresses map[string]string
	Meta            map[string]string
	CreateIndex     uint64
	ModifyIndex     uint64
}

// nodeID is a node's Consul node ID: a UUID-shaped hash of its name, the
// same on every agent (Consul's are random UUIDs kept in the data dir).
func nodeID(name string) string {
	h := sha256.Sum256([]byte("namecast-node\x00" + name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// nodes are the live members by name, this agent always among them.
func (s *Server) nodes() map[string]node {
	out := map[string]node{}
	var ms []gossip.Member
	if s.cfg.Agent != nil {
		ms = s.cfg.Agent.Members()
	}
	for _, m := range ms {
		if m.Status != gossip.StatusAlive {
			continue
		}
		out[m.Name] = s.nodeOf(m.Name, hostOf(m.Addr))
	}
	if _, ok := out[s.cfg.Node]; !ok {
		out[s.cfg.Node] = s.nodeOf(s.cfg.Node, "127.0.0.1")
	}
	return out
}

func (s *Server) nodeOf(name, addr string) node {
	return node{ID: nodeID(name), Node: name, Address: addr, Datacenter: s.cfg.Datacenter,
		TaggedAddresses: map[string]string{"lan": addr, "lan_ipv4": addr, "wan": addr, "wan_ipv4": addr},
		Meta:            map[string]string{"consul-network-segment": ""}, CreateIndex: 1, ModifyIndex: 1}
}

// nodeNamed is node name, or this agent's for "" (a rule, held by no
// agent, is served by whichever agent is asked) and for a node not alive
// here yet.
func (s *Server) nodeNamed(nodes map[string]node, name string) node {
	if n, ok := nodes[name]; ok {
		return n
	}
	if name == "" {
		return nodes[s.cfg.Node]
	}
	return s.nodeOf(name, "")
}

func sortedNodes(m map[string]node) []node {
	out := make([]node, 0, len(m))
	for _, n := range m {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
