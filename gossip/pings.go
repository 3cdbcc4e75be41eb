package gossip

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/coordinate"
)

// pings is Gossip's memberlist.PingDelegate: acks carry our Vivaldi
// coordinate, so RTT estimates to every member come free with probes.
type pings Gossip

// maxCoordinateBytes bounds what we decode from an ack payload.
const maxCoordinateBytes = 1024

func (p *pings) AckPayload() []byte {
	g := (*Gossip)(p)
	// The cached summary: memberlist builds the ack on its packet
	// goroutine, and waiting there for the table's lock (held for the
	// whole merge of a large snapshot) delays the ack past the prober's
	// timeout, a false suspicion that feeds more work to a busy host.
	return encodeAck(g.ackSummary.Load(), g.coord.GetCoordinate())
}

func (p *pings) NotifyPingComplete(other *memberlist.Node, rtt time.Duration, payload []byte) {
	g := (*Gossip)(p)
	if len(payload) == 0 || len(payload) > maxCoordinateBytes {
		return
	}
	c, sum, hasSum, err := decodeAck(payload)
	if err == errLegacyAck {
		err = json.Unmarshal(payload, &c)
	}
	if err != nil || !c.IsValid() || len(c.Vec) != len(g.coord.GetCoordinate().Vec) {
		g.malformed("coordinate")
		return
	}
	if hasSum {
		g.noteSummary(other.Name, sum)
	}
	if _, err := g.coord.Update(other.Name, &c, rtt); err != nil {
		return
	}
	g.mu.Lock()
	if m := g.members[other.Name]; m != nil {
		m.coord = &c
	}
	g.mu.Unlock()
}

// RTT estimates the round trip to a member from Vivaldi coordinates; ok is
// false until a probe of that member has completed.
func (g *Gossip) RTT(name string) (time.Duration, bool) {
	if name == g.name {
		return 0, true
	}
	g.mu.Lock()
	m := g.members[name]
	var c *coordinate.Coordinate
	if m != nil {
		c = m.coord
	}
	g.mu.Unlock()
	if c == nil {
		return 0, false
	}
	return g.coord.GetCoordinate().DistanceTo(c), true
}
