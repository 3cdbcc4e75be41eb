package consul

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// leaseDoor names the door's leases.
const leaseDoor = "consul"

// registry is this agent's Consul registrations: each service is one
// record (catalog.Registration.Record) held under a lease of its own,
// whose state is the definition (with its checks), so that with a data
// dir it comes back after a restart. Check states are in the record;
// the latest output of each check is this agent's alone.
//
// Locks: runMu orders the runner's Set and Remove as the registrations
// change; mu guards the maps and each record's write. A change takes
// runMu, then mu; it applies under mu, calls the runner with only runMu,
// and waits for the disk with neither. The runner's reports take mu
// alone.
type registry struct {
	s     *Server
	runMu sync.Mutex
	mu    sync.Mutex
	svcs  map[string]*local // by service ID
	owner map[string]string // check ID -> service ID
}

// local is one service registered here.
type local struct {
	reg     catalog.Registration // its Checks are the states the record holds
	defs    map[string]catalog.CheckDef
	outputs map[string]string // each check's latest output
	regMs   int64
	key     string
	urlKey  string // the Dubbo URL record it also holds (dubbo.go), or ""
}

// saved is a lease's state: what brings a service back after a restart.
type saved struct {
	Reg   catalog.Registration `json:"reg"`
	Defs  []catalog.CheckDef   `json:"defs,omitempty"`
	RegMs int64                `json:"ms"`
}

func newRegistry(s *Server) *registry {
	return &registry{s: s, svcs: map[string]*local{}, owner: map[string]string{}}
}

// register adds or replaces the service reg with its checks; with
// replace, the service's checks not in defs are removed (Consul's
// replace-existing-checks), else kept. A check already known keeps its
// status.
func (g *registry) register(reg catalog.Registration, defs []catalog.CheckDef, replace bool) error {
	g.runMu.Lock()
	defer g.runMu.Unlock()
	g.mu.Lock()
	for _, d := range defs {
		if sid, ok := g.owner[d.ID]; ok && sid != reg.ID {
			g.mu.Unlock()
			return errorf(http.StatusBadRequest, "check ID %q is service %q's", d.ID, sid)
		}
	}
	old := g.svcs[reg.ID]
	l := &local{reg: reg, defs: map[string]catalog.CheckDef{}, outputs: map[string]string{}, regMs: time.Now().UnixMilli()}
	var removed []string
	if old != nil {
		l.regMs, l.key = old.regMs, old.key
		for id, d := range old.defs {
			if replace && !slices.ContainsFunc(defs, func(n catalog.CheckDef) bool { return n.ID == id }) {
				removed = append(removed, id)
				continue
			}
			l.defs[id], l.outputs[id] = d, old.outputs[id]
		}
	}
	for _, d := range defs {
		l.defs[d.ID] = d
	}
	l.reg.Checks = g.states(l, old)
	if err := l.reg.Validate(); err != nil {
		g.mu.Unlock()
		return errorf(http.StatusBadRequest, "%v", err)
	}
	err := g.commitLocked(l, func() {
		g.svcs[reg.ID] = l
		for _, id := range removed {
			delete(g.owner, id)
		}
		for id := range l.defs {
			g.owner[id] = reg.ID
		}
	})
	if err != nil && !errors.Is(err, host.ErrUnsaved) {
		return err // nothing changed
	}
	for _, id := range removed {
		g.s.checks.Remove(id)
	}
	kept := map[string]string{}
	for _, c := range l.reg.Checks {
		kept[c.ID] = c.Status
	}
	for _, d := range defs {
		d.ServiceID, d.Status = reg.ID, kept[d.ID] // the runner starts where the record is
		if err := g.s.checks.Set(d); err != nil {
			g.s.log.Warn("Consul check not started", "check", d.ID, "service", reg.ID, "err", err)
		}
	}
	return err
}

// states are l's checks' states in ID order: a check old had keeps its
// status and output, a new one starts at its definition's (critical
// when it names none, as Consul's checks start).
func (g *registry) states(l, old *local) []catalog.Check {
	ids := make([]string, 0, len(l.defs))
	for id := range l.defs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]catalog.Check, 0, len(ids))
	for _, id := range ids {
		d := l.defs[id]
		c := catalog.Check{ID: id, Name: d.Name, Notes: d.Notes, Type: d.Type(), Status: d.Status}
		if c.Status == "" {
			c.Status = catalog.Critical
		}
		if old != nil {
			for _, oc := range old.reg.Checks {
				if oc.ID == id {
					c.Status, c.Output = oc.Status, oc.Output
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// commitLocked writes l's record under its lease (replacing the record
// at its old key when the name changed) through the host, which applies
// it, then runs then (the door notes the change) and lets go of g.mu,
// and waits until the change is on disk. g.mu is held on entry and let
// go on return. An error wrapping host.ErrUnsaved: the change is made
// (then ran) but not on disk; any other: nothing changed.
func (g *registry) commitLocked(l *local, then func()) error {
	unlocked := false
	unlock := func() {
		then()
		unlocked = true
		g.mu.Unlock()
	}
	defer func() {
		if !unlocked {
			g.mu.Unlock()
		}
	}()
	s := g.s
	node := s.table.Local()
	rec, err := l.reg.Record(node, routes.OriginOwner(node), l.regMs)
	if err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	key := rec.Key()
	z := rec.Znode
	z.Mtime = time.Now().UnixMilli()
	var deletes []string
	if l.key != "" && l.key != key {
		deletes = append(deletes, l.key)
	}
	puts := []routes.Record{rec}
	urlKey := ""
	if u, ok := providerURL(l.reg); ok {
		urlKey = routes.URLKey(u.Interface, u.Category, u.URL)
		puts = append(puts, routes.Record{URL: &u})
	}
	if l.urlKey != "" && l.urlKey != urlKey {
		deletes = append(deletes, l.urlKey)
	}
	if cur, ok := s.table.LocalRecord(key); ok && cur.Znode != nil {
		if string(cur.Znode.Data) == string(z.Data) && len(deletes) == 0 && urlKey == l.urlKey {
			l.key = key
			unlock() // unchanged
			return nil
		}
		z.Ctime, z.Version = cur.Znode.Ctime, cur.Znode.Version+1
	}
	z.Stamp = s.table.Stamp()
	state, _ := json.Marshal(saved{Reg: l.reg, Defs: sortedDefs(l.defs), RegMs: l.regMs})
	w := lease.Write{Lease: lease.Lease{Door: leaseDoor, ID: l.reg.ID, Renewed: time.Now(), State: state},
		Puts: puts, Deletes: deletes}
	l.key, l.urlKey = key, urlKey
	err = s.host.Write(unlock, w)
	if err == nil || errors.Is(err, host.ErrUnsaved) {
		s.metrics.IncrCounter([]string{"consul", "writes"}, 1)
	}
	return storeError(err)
}

func sortedDefs(m map[string]catalog.CheckDef) []catalog.CheckDef {
	out := make([]catalog.CheckDef, 0, len(m))
	for _, d := range m {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b catalog.CheckDef) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// deregister withdraws the service id; false when it is not registered
// here.
func (g *registry) deregister(id string) (bool, error) {
	g.runMu.Lock()
	defer g.runMu.Unlock()
	g.mu.Lock()
	l, ok := g.svcs[id]
	if !ok {
		g.mu.Unlock()
		return false, nil
	}
	var deletes []string
	for _, k := range []string{l.key, l.urlKey} {
		if k != "" {
			deletes = append(deletes, k)
		}
	}
	unlocked := false
	err := g.s.host.Write(func() {
		delete(g.svcs, id)
		for cid := range l.defs {
			delete(g.owner, cid)
		}
		unlocked = true
		g.mu.Unlock()
	}, lease.Write{Lease: lease.Lease{Door: leaseDoor, ID: id}, Deletes: deletes, Drop: true})
	if !unlocked {
		g.mu.Unlock()
		return false, storeError(err) // nothing withdrawn
	}
	for cid := range l.defs {
		g.s.checks.Remove(cid)
	}
	return true, storeError(err)
}

// addCheck adds (or replaces) one check of a service registered here.
func (g *registry) addCheck(d catalog.CheckDef) error {
	g.mu.Lock()
	l, ok := g.svcs[d.ServiceID]
	if !ok {
		g.mu.Unlock()
		return errorf(http.StatusBadRequest, "ServiceID %q does not exist", d.ServiceID)
	}
	reg := l.reg
	g.mu.Unlock()
	// register takes the locks again and keeps the other checks; a
	// deregistration in between makes it a new registration of the
	// same service, as two calls in that order would.
	return g.register(reg, []catalog.CheckDef{d}, false)
}

// removeCheck removes one check; false when no service here has it.
func (g *registry) removeCheck(id string) (bool, error) {
	g.runMu.Lock()
	defer g.runMu.Unlock()
	g.mu.Lock()
	sid, ok := g.owner[id]
	if !ok {
		g.mu.Unlock()
		return false, nil
	}
	old := g.svcs[sid]
	l := *old
	l.defs = map[string]catalog.CheckDef{}
	for cid, d := range old.defs {
		if cid != id {
			l.defs[cid] = d
		}
	}
	l.reg.Checks = g.states(&l, old)
	err := g.commitLocked(&l, func() {
		g.svcs[sid] = &l
		delete(g.owner, id)
	})
	if err != nil && !errors.Is(err, host.ErrUnsaved) {
		return false, err
	}
	g.s.checks.Remove(id)
	return true, err
}

// reportCheck writes check checkID's state as the runner holds it now
// (a report may come after later changes: the latest is written, never
// an older one). A change of status is written to the record, so every
// agent sees it; output alone stays here.
func (g *registry) reportCheck(checkID string) {
	st, ok := g.s.checks.State(checkID)
	if !ok {
		return
	}
	status, output := st.Status, st.Output
	if len(output) > catalog.MaxCheckOutput {
		output = output[:catalog.MaxCheckOutput] + " ... (captured " + strconv.Itoa(catalog.MaxCheckOutput) + " of " + strconv.Itoa(len(output)) + " bytes)"
	}
	g.mu.Lock()
	sid, ok := g.owner[checkID]
	if !ok {
		g.mu.Unlock()
		return
	}
	old := g.svcs[sid]
	old.outputs[checkID] = output
	i := slices.IndexFunc(old.reg.Checks, func(c catalog.Check) bool { return c.ID == checkID })
	if i < 0 || old.reg.Checks[i].Status == status {
		g.mu.Unlock()
		return
	}
	l := *old
	l.reg.Checks = slices.Clone(old.reg.Checks)
	l.reg.Checks[i].Status, l.reg.Checks[i].Output = status, output
	err := g.commitLocked(&l, func() { g.svcs[sid] = &l })
	if err != nil {
		g.s.log.Warn("Consul check status not written", "check", checkID, "service", sid, "status", status, "err", err)
	}
}

// deregisterCritical is the runner's DeregisterCriticalServiceAfter.
func (g *registry) deregisterCritical(serviceID string) {
	if ok, err := g.deregister(serviceID); ok || err != nil {
		g.s.log.Info("Consul service deregistered: a check stayed critical past its DeregisterCriticalServiceAfter", "service", serviceID, "err", err)
	}
}

// restore takes back the services registered before a restart (their
// records are republished already) and starts their checks again.
func (g *registry) restore() {
	node := g.s.table.Local()
	for _, ls := range g.s.host.RestoredLeases(leaseDoor) {
		var st saved
		if json.Unmarshal(ls.State, &st) != nil || st.Reg.ID == "" {
			g.s.log.Warn("Consul registration not restored: its saved state is unreadable", "service", ls.ID)
			continue
		}
		l := &local{reg: st.Reg, defs: map[string]catalog.CheckDef{}, outputs: map[string]string{}, regMs: st.RegMs}
		for _, d := range st.Defs {
			l.defs[d.ID] = d
		}
		for _, k := range ls.Keys {
			rec, ok := g.s.table.LocalRecord(k)
			if !ok {
				continue
			}
			if in, ok := catalog.Registered(node, rec); ok {
				l.key, l.reg.Checks = k, in.Checks
			} else if rec.URL != nil {
				l.urlKey = k
			}
		}
		g.mu.Lock()
		g.svcs[l.reg.ID] = l
		for id := range l.defs {
			g.owner[id] = l.reg.ID
		}
		g.mu.Unlock()
		for _, d := range st.Defs {
			d.ServiceID = l.reg.ID
			for _, c := range l.reg.Checks {
				if c.ID == d.ID {
					d.Status = c.Status // the runner starts where the record is
				}
			}
			g.s.checks.Set(d)
		}
	}
}

// snapshot is a copy of the services registered here, by ID.
func (g *registry) snapshot() map[string]local {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]local, len(g.svcs))
	for id, l := range g.svcs {
		c := *l
		c.outputs = make(map[string]string, len(l.outputs))
		for k, v := range l.outputs {
			c.outputs[k] = v
		}
		out[id] = c
	}
	return out
}

// storeError is a refused write: past the agent's record budget (the
// message names the flag), or not saved (the data dir); nil for nil.
func storeError(err error) error {
	if err == nil {
		return nil
	}
	return errorf(http.StatusInternalServerError, "%v", err)
}
