package agent

// The doors' holds on this agent's records are kept by a lease.Store
// (package lease explains the mechanism), which the agent hands its doors
// through their host; the agent withdraws what no door claims.

// dropUnclaimed withdraws the records of restored leases no door took back
// (the door is off after the restart).
func (a *Agent) dropUnclaimed() {
	orphans := a.leases.Unclaimed()
	if len(orphans) == 0 {
		return
	}
	var deletes []string
	for _, l := range orphans {
		a.leases.DropLease(l.Door, l.ID)
		for _, r := range l.Records(a.table) {
			deletes = append(deletes, r.Key())
		}
		a.log.Warn("withdrawing a restored registration no door claims (is the door off now?)", "door", l.Door, "id", l.ID)
	}
	a.host.Apply(nil, deletes)
}

// freezeLeases stops saving leases at shutdown (lease.Store.Freeze); a
// no-op before Start made the store.
func (a *Agent) freezeLeases(forget bool) {
	if a.leases != nil {
		a.leases.Freeze(forget)
	}
}
