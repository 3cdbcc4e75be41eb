package agent

// The doors' holds on this agent's records are kept by a lease.Store
// (package lease explains the mechanism), which the agent hands its doors
// through their host; the agent withdraws what no door claims.

// dropUnclaimed withdraws the records of restored leases no door took back
// (the door is off after the restart), but not those another door's lease
// still holds.
func (a *Agent) dropUnclaimed() {
	orphans := a.leases.Unclaimed()
	if len(orphans) == 0 {
		return
	}
	for _, l := range orphans {
		var deletes []string
		for _, r := range l.Records(a.table) {
			deletes = append(deletes, r.Key())
		}
		a.leases.DropLease(l.Door, l.ID)
		// Through the door's host: what another door's lease still holds
		// (a URL registered over Nacos and over HTTP) stays.
		a.host.For(l.Door).Apply(nil, deletes)
		a.log.Warn("withdrawing a restored registration no door claims (is the door off now?)", "door", l.Door, "id", l.ID)
	}
}

// freezeLeases stops saving leases at shutdown (lease.Store.Freeze); a
// no-op before Start made the store.
func (a *Agent) freezeLeases(forget bool) {
	if a.leases != nil {
		a.leases.Freeze(forget)
	}
}
