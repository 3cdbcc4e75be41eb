package gossiptest

import (
	"fmt"
	"time"
)

// link is one direction between two named nodes.
type link struct{ from, to string }

// faults is the network's fault configuration, guarded by Network.mu.
type faults struct {
	loss     float64
	linkLoss map[link]float64
	dup      float64
	delayMin time.Duration
	delayMax time.Duration
	cut      map[link]bool // holds both directions of every cut pair
	isolated map[string]bool
	hung     map[string]bool // see Hang
}

func newFaults() faults {
	return faults{
		linkLoss: make(map[link]float64),
		cut:      make(map[link]bool),
		isolated: make(map[string]bool),
		hung:     make(map[string]bool),
	}
}

func checkRate(rate float64) {
	if !(rate >= 0 && rate <= 1) { // also rejects NaN
		panic(fmt.Sprintf("gossiptest: rate %v outside [0, 1]", rate))
	}
}

// SetLoss drops each packet with probability rate, on every link. Streams,
// being reliable, are not affected.
func (n *Network) SetLoss(rate float64) {
	checkRate(rate)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.faults.loss = rate
}

// SetLinkLoss drops packets from one node to another with probability rate,
// independently of the global loss: a packet survives only if it survives
// both. Rate 0 removes the link's setting.
func (n *Network) SetLinkLoss(from, to string, rate float64) {
	checkRate(rate)
	n.mu.Lock()
	defer n.mu.Unlock()
	if rate == 0 {
		delete(n.faults.linkLoss, link{from, to})
		return
	}
	n.faults.linkLoss[link{from, to}] = rate
}

// SetDuplicate makes each packet that survives loss arrive twice with
// probability rate; the copy draws its own delay.
func (n *Network) SetDuplicate(rate float64) {
	checkRate(rate)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.faults.dup = rate
}

// SetDelay delays every packet, and the opening of every stream, by a time
// drawn uniformly from [minDelay, maxDelay]. Bytes on an open stream are not
// delayed.
func (n *Network) SetDelay(minDelay, maxDelay time.Duration) {
	if minDelay < 0 || maxDelay < minDelay {
		panic(fmt.Sprintf("gossiptest: bad delay range [%v, %v]", minDelay, maxDelay))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.faults.delayMin, n.faults.delayMax = minDelay, maxDelay
}

// Partition cuts every link between a node of groupA and a node of groupB,
// both ways, until Heal: packets are dropped, dials fail and open streams
// between them are closed. Links within a group are untouched, and cuts from
// earlier calls remain.
func (n *Network) Partition(groupA, groupB []string) {
	n.mu.Lock()
	for _, a := range groupA {
		for _, b := range groupB {
			if a != b {
				n.faults.cut[link{a, b}] = true
				n.faults.cut[link{b, a}] = true
			}
		}
	}
	cut := n.cutStreamsLocked()
	n.mu.Unlock()
	closeAll(cut)
}

// Isolate cuts every link of the named node, including links to nodes added
// later, until Heal.
func (n *Network) Isolate(name string) {
	n.mu.Lock()
	n.faults.isolated[name] = true
	cut := n.cutStreamsLocked()
	n.mu.Unlock()
	closeAll(cut)
}

// Heal restores every link cut by Partition or Isolate. It does not change
// loss, delay or duplication, and does not reopen the streams it closed.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.faults.cut)
	clear(n.faults.isolated)
}

func (n *Network) blockedLocked(from, to string) bool {
	f := &n.faults
	return f.isolated[from] || f.isolated[to] || f.cut[link{from, to}]
}

func (n *Network) blocked(from, to string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.blockedLocked(from, to)
}

// packetFate decides what becomes of one packet: it returns the delay of
// each copy to deliver, none if the packet is lost.
func (n *Network) packetFate(from, to string) []time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	f := &n.faults
	if n.blockedLocked(from, to) || n.hungLocked(from) || n.hungLocked(to) || n.chanceLocked(f.loss) || n.chanceLocked(f.linkLoss[link{from, to}]) {
		return nil
	}
	delays := []time.Duration{n.delayLocked()}
	if n.chanceLocked(f.dup) {
		delays = append(delays, n.delayLocked())
	}
	return delays
}

// dialFate returns how long opening a stream takes, or false if the link is
// cut.
func (n *Network) dialFate(from, to string) (time.Duration, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.blockedLocked(from, to) {
		return 0, false
	}
	return n.delayLocked(), true
}

// chanceLocked draws from the RNG only for a non-zero rate, so faults that
// are off do not shift the decisions of those that are on.
func (n *Network) chanceLocked(rate float64) bool {
	return rate > 0 && n.rng.Float64() < rate
}

func (n *Network) delayLocked() time.Duration {
	f := &n.faults
	if f.delayMax <= f.delayMin {
		return f.delayMin
	}
	return f.delayMin + time.Duration(n.rng.Int64N(int64(f.delayMax-f.delayMin)+1))
}
