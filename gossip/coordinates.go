package gossip

import (
	"github.com/hashicorp/serf/coordinate"
)

// Coordinates returns this member's Vivaldi coordinate and the last one
// each other member sent in a probe ack; a member not probed yet is absent.
// The coordinates are copies: callers may keep them.
func (g *Gossip) Coordinates() (self *coordinate.Coordinate, others map[string]*coordinate.Coordinate) {
	self = g.coord.GetCoordinate()
	others = map[string]*coordinate.Coordinate{}
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, m := range g.members {
		if m.coord != nil && name != g.name {
			others[name] = m.coord.Clone()
		}
	}
	return self, others
}
