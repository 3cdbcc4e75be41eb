package gossip

// An agent restarted from its data dir may restore records of its own
// origin older than what its peers already hold of its previous
// incarnation (a disk that lost the entry of an acknowledged withdrawal).
// Until it has asked them (agent/lease: Settle), it withholds its own
// origin: our digest leaves it out, so no peer pulls the restored records
// and takes them over the old incarnation's, which peers go on serving
// (retired, routes/retire.go). The agent publishes nothing meanwhile, and
// Release ends it.

// Withhold leaves our own origin out of the digests we send until
// Release. Call it before Start.
func (g *Gossip) Withhold() { g.withheld.Store(true) }

// Release ends Withhold: peers see our origin in our digests again and
// pull it.
func (g *Gossip) Release() { g.withheld.Store(false) }
