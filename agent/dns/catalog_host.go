package dns

import (
	"net"
	"strings"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// hostCatalog is the Catalog of an agent: the Consul door's model of its
// table (package catalog), each node's address its gossip address.
type hostCatalog struct {
	table   *routes.Table
	self    string
	members func() []gossip.Member // nil: only self, without an address

	mu       sync.Mutex
	nodesIdx uint64
	nodes    map[string]Node // by lower-case name; nil until first read
	namesAt  time.Time
	namesIdx uint64
	names    map[string][]string // lower-case service name -> names as spelled
}

// namesEvery bounds how often a query whose service name is spelled in
// another case than the service's rebuilds the list of names (a scan of
// every service): at most once a second, and only when the table changed.
const namesEvery = time.Second

func newHostCatalog(t *routes.Table, self string, members func() []gossip.Member) *hostCatalog {
	return &hostCatalog{table: t, self: self, members: members}
}

// membersOf is the agent's Members, when env.Agent has it.
func membersOf(agent any) func() []gossip.Member {
	if a, ok := agent.(interface{ Members() []gossip.Member }); ok {
		return a.Members
	}
	return nil
}

// Instances are the instances of the service name, spelled in any case
// (as Consul's catalog compares names).
func (c *hostCatalog) Instances(name string) []Instance {
	ins := catalog.Lookup(c.table, name)
	if len(ins) == 0 {
		for _, spelled := range c.spellings(name) {
			if spelled != name {
				ins = append(ins, catalog.Lookup(c.table, spelled)...)
			}
		}
	}
	if len(ins) == 0 {
		return nil
	}
	nodes := c.nodeMap()
	out := make([]Instance, 0, len(ins))
	for _, in := range ins {
		node := in.Node
		if node == "" { // a cluster rule, held by no agent: ours to serve
			node = c.self
		}
		out = append(out, Instance{Node: node, NodeAddr: nodes[strings.ToLower(node)].Addr, Address: in.Address,
			Port: in.Port, Tags: in.Tags, Status: in.Status()})
	}
	return out
}

// spellings are the names of the services called name in any case.
func (c *hostCatalog) spellings(name string) []string {
	idx := c.table.Index()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil || idx != c.namesIdx && time.Since(c.namesAt) >= namesEvery {
		c.names = map[string][]string{}
		for n := range catalog.Names(c.table) {
			l := strings.ToLower(n)
			c.names[l] = append(c.names[l], n)
		}
		c.namesIdx, c.namesAt = idx, time.Now()
	}
	return c.names[strings.ToLower(name)]
}

// Node is the live agent named name.
func (c *hostCatalog) Node(name string) (Node, bool) {
	n, ok := c.nodeMap()[strings.ToLower(name)]
	return n, ok
}

// nodeMap is the live agents by lower-case name, rebuilt when membership
// changed.
func (c *hostCatalog) nodeMap() map[string]Node {
	idx := c.table.IndexOf(routes.WatchMembers)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes != nil && idx == c.nodesIdx {
		return c.nodes
	}
	nodes := map[string]Node{}
	if c.members == nil {
		nodes[strings.ToLower(c.self)] = Node{Name: c.self}
	} else {
		for _, m := range c.members() {
			if m.Status != gossip.StatusAlive {
				continue
			}
			host, _, err := net.SplitHostPort(m.Addr)
			if err != nil {
				host = m.Addr
			}
			nodes[strings.ToLower(m.Name)] = Node{Name: m.Name, Addr: host}
		}
	}
	c.nodes, c.nodesIdx = nodes, idx
	return nodes
}
