package gossiptest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
)

// basePort is the port of the first node; later nodes count up from it. All
// nodes share the IP 127.0.0.1, as in memberlist's MockNetwork: memberlist
// only needs an IP and a port to advertise, and nothing here is bound.
const basePort = 7946

// Network connects the Transports it creates and applies the faults set on
// it. The zero value is not usable; call NewNetwork.
type Network struct {
	mu       sync.Mutex
	rng      *rand.Rand // guarded by mu: one decision sequence per seed
	faults   faults
	nextPort int
	byName   map[string]*Transport // the current transport of each node
	byAddr   map[string]*Transport
	all      []*Transport // every transport ever made, for TotalStats
	streams  map[*streamConn]struct{}
	closed   bool
}

// NewNetwork returns an empty network with no faults whose random choices
// are drawn from seed.
func NewNetwork(seed int64) *Network {
	return &Network{
		rng:      rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		faults:   newFaults(),
		nextPort: basePort,
		byName:   make(map[string]*Transport),
		byAddr:   make(map[string]*Transport),
		streams:  make(map[*streamConn]struct{}),
	}
}

// NewTransport attaches a node called name and returns its transport, to be
// set as memberlist.Config.Transport with Config.Name set to the same name
// (faults are keyed by it). A new name gets the next free address. Giving the
// name of a node whose transport was shut down replaces it on the same
// address, which is how a test restarts a node. NewTransport panics if name
// already has a running transport or the network is closed.
func (n *Network) NewTransport(name string) *Transport {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		panic("gossiptest: NewTransport on a closed Network")
	}
	var hostPort string
	if old, ok := n.byName[name]; ok {
		if !old.stopped() {
			panic(fmt.Sprintf("gossiptest: node %q already has a running transport", name))
		}
		hostPort = old.addr.String()
	} else {
		hostPort = net.JoinHostPort("127.0.0.1", fmt.Sprint(n.nextPort))
		n.nextPort++
	}
	t := newTransport(n, name, hostPort)
	n.byName[name] = t
	n.byAddr[hostPort] = t
	n.all = append(n.all, t)
	return t
}

// Close shuts down every transport of the network and waits for their
// goroutines. It is idempotent, and makes later NewTransport calls panic.
func (n *Network) Close() {
	n.mu.Lock()
	n.closed = true
	all := slices.Clone(n.all)
	n.mu.Unlock()
	for _, t := range all {
		_ = t.Shutdown()
	}
}

// Stats returns the counters of the current transport of the named node, or
// zero Stats if there is none.
func (n *Network) Stats(name string) Stats {
	n.mu.Lock()
	t := n.byName[name]
	n.mu.Unlock()
	if t == nil {
		return Stats{}
	}
	return t.Stats()
}

// TotalStats sums the counters of every transport the network made,
// including ones since shut down or replaced.
func (n *Network) TotalStats() Stats {
	n.mu.Lock()
	all := slices.Clone(n.all)
	n.mu.Unlock()
	var sum Stats
	for _, t := range all {
		sum = sum.add(t.Stats())
	}
	return sum
}

// lookup routes by address, as a real network does; memberlist's optional
// node name in the Address is not needed for that.
func (n *Network) lookup(hostPort string) *Transport {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byAddr[hostPort]
}
