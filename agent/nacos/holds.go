package nacos

import (
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// door names the Nacos door's leases (package lease) and its holds on the
// host (host.Local.For).
const door = "nacos"

// A holder is who holds ephemeral records on this agent through the
// Nacos door: a gRPC connection ("grpc:" id), a 1.x HTTP registration
// kept by beats ("beat:" instance), or, after the agent restarted, the
// lease of a connection that had not come back yet. Each holder is a lease
// of the host (its ID is the holder's name), so the host's other doors
// see it: a record is withdrawn from this agent when its last holder, of
// any door, lets go, never earlier. Within the door, holders counts the
// Nacos holders of each record; the host counts the other doors'.
type holder string

func grpcHolder(id string) holder { return holder("grpc:" + id) }

// beatHolder names the holder of an HTTP instance by its identity, each
// part escaped so that no two identities share a name.
func beatHolder(identity string) holder {
	parts := strings.Split(identity, "\x00")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return holder("beat:" + strings.Join(parts, "/"))
}

// holding is what one holder holds, and its lease's deadline.
type holding struct {
	recs     map[string]routes.Record // by key
	deadline time.Time                // zero: until let go
	renewed  time.Time
	state    holdState
}

// holdState is a lease's State: what the door needs to resume its holder
// after a restart.
type holdState struct {
	Kind     string `json:"kind"`               // "grpc" or "beat"
	Remote   string `json:"remote,omitempty"`   // a connection's client address
	Identity string `json:"identity,omitempty"` // a beat's instance identity
}

const (
	kindGRPC = "grpc"
	kindBeat = "beat"
)

func (s *Server) lease(h holder, hd *holding) lease.Lease {
	keys := slices.Sorted(maps.Keys(hd.recs))
	st, _ := json.Marshal(hd.state)
	return lease.Lease{Door: door, ID: string(h), Keys: keys, Deadline: hd.deadline, Renewed: hd.renewed, State: st}
}

func sortedRecords(m map[string]routes.Record) []routes.Record {
	out := make([]routes.Record, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// hold changes what h holds: it takes puts (a record of the same key
// replaced) and lets go of drops, with the lease deadline and state
// given. The lease is written first (host.Hold, or Drop once h holds
// nothing), so an error (the data dir cannot save it) changes nothing
// and goes out through the door. Then puts are applied, and what no Nacos
// holder holds any more is withdrawn through the host, which keeps what
// another door's lease holds. The caller lets go of writeMu, then waits
// for the returned Saving before it answers, so Nacos writers at the same
// moment share one fsync (package lease, group commit). writeMu held.
func (s *Server) hold(h holder, puts []routes.Record, drops []string, deadline time.Time, st holdState) (lease.Saving, error) {
	return s.change(h, puts, drops, deadline, st, false)
}

// change is hold; forget, when h holds nothing afterwards, forgets its
// lease (lease.Forget) rather than dropping it: a client that went away
// is told nothing, so the withdrawal happens even when the disk refuses
// the removal, which is then saved once it takes writes.
func (s *Server) change(h holder, puts []routes.Record, drops []string, deadline time.Time, st holdState, forget bool) (lease.Saving, error) {
	s.mu.Lock()
	old := s.held[h]
	next := &holding{recs: map[string]routes.Record{}, deadline: deadline, renewed: time.Now(), state: st}
	if old != nil {
		maps.Copy(next.recs, old.recs)
	}
	s.mu.Unlock()
	for _, k := range drops {
		delete(next.recs, k)
	}
	for _, r := range puts {
		next.recs[r.Key()] = r
	}
	var sv lease.Saving
	var err error
	switch {
	case len(next.recs) > 0:
		sv, err = s.reg.Hold(s.lease(h, next), sortedRecords(next.recs))
	case old != nil && forget:
		sv = s.reg.Forget(door, string(h))
	case old != nil:
		sv, err = s.reg.Drop(door, string(h))
	default:
		return sv, nil
	}
	if err != nil {
		return sv, budgetError(err)
	}
	var dels []string
	s.mu.Lock()
	if old != nil {
		for k := range old.recs {
			if _, kept := next.recs[k]; !kept && s.releaseLocked(h, k) {
				dels = append(dels, k)
			}
		}
	}
	for k := range next.recs {
		m := s.holders[k]
		if m == nil {
			m = map[holder]struct{}{}
			s.holders[k] = m
		}
		m[h] = struct{}{}
	}
	if len(next.recs) > 0 {
		s.held[h] = next
	} else {
		delete(s.held, h)
	}
	s.mu.Unlock()
	if len(puts) > 0 || len(dels) > 0 {
		if _, err := s.reg.Apply(puts, dels); err != nil {
			// Past the record budget (another door's write came first):
			// h holds what it held; its lease is put back when it next
			// changes.
			s.mu.Lock()
			for k := range next.recs {
				s.releaseLocked(h, k)
			}
			if old != nil {
				for k := range old.recs {
					if s.holders[k] == nil {
						s.holders[k] = map[holder]struct{}{}
					}
					s.holders[k][h] = struct{}{}
				}
				s.held[h] = old
			} else {
				delete(s.held, h)
			}
			s.mu.Unlock()
			return sv, budgetError(err)
		}
	}
	return sv, nil
}

// budgetError is the Nacos error of a write past the agent's record
// budget, OVER_THRESHOLD as Nacos answers past its own limits; any other
// error is left as it is.
func budgetError(err error) error {
	if errors.Is(err, routes.ErrBudget) {
		return &codedError{nacoswire.ErrOverThreshold, err.Error()}
	}
	return err
}

// saved waits for a change hold wrote (writeMu not held): an error means
// it is not on disk, and the client is told so (a Nacos server error); a
// Nacos error from before the change goes out as it is.
func saved(sv lease.Saving, err error) error {
	if err == nil {
		err = sv.Wait()
	}
	if _, coded := err.(*codedError); err != nil && !coded {
		return &codedError{nacoswire.ErrServer, err.Error()}
	}
	return err
}

// renew moves h's lease deadline (a beat, a connection's end): saved
// lazily by the host, as a deadline alone is. writeMu held.
func (s *Server) renew(h holder, deadline time.Time) error {
	s.mu.Lock()
	old := s.held[h]
	if old == nil {
		s.mu.Unlock()
		return nil
	}
	next := *old
	next.deadline, next.renewed = deadline, time.Now()
	s.held[h] = &next
	s.mu.Unlock()
	return s.reg.PutLease(s.lease(h, &next))
}

// letGo lets go of everything h holds. For a client that went away (a
// closed connection past its grace, beats that stopped: gone true) the
// records are withdrawn at once and the lease forgotten (change) when it
// has a deadline, so that a restart before its removal is saved restores
// it only until then; otherwise (a client's own deregistration, or a
// lease without deadline) the removal is written first and an error keeps
// everything. writeMu held; the caller waits for the Saving, or not when
// nobody is told.
func (s *Server) letGo(h holder, gone bool) (lease.Saving, error) {
	s.mu.Lock()
	old := s.held[h]
	s.mu.Unlock()
	if old == nil {
		return lease.Saving{}, nil
	}
	return s.change(h, nil, slices.Collect(maps.Keys(old.recs)), old.deadline, old.state, gone && !old.deadline.IsZero())
}

// releaseLocked drops h as a holder of key and reports whether it was the
// last Nacos holder (the caller withdraws the record; the host keeps it if
// another door holds it). s.mu held.
func (s *Server) releaseLocked(h holder, key string) bool {
	m := s.holders[key]
	if _, ok := m[h]; !ok {
		return false
	}
	delete(m, h)
	if len(m) == 0 {
		delete(s.holders, key)
		return true
	}
	return false
}

// restoreLeases takes back the holders of before the agent restarted
// (their records are already republished, package lease). Called by Serve
// before anything is served.
//
//   - A 1.x HTTP instance is held by its beats again: its client's next
//     beat finds it (10200, not 20404) and renews it. Its deadline is the
//     saved one, but at least the grace and a beat interval from now, so
//     a client beating on time is never expired for the agent's own
//     absence.
//   - A gRPC connection did not survive the restart: its client
//     reconnects and re-registers its instances (Nacos clients redo their
//     registrations on reconnect), and the restored holder lets go after
//     the grace, counted from when the agent is ready (until then the
//     door refuses ServerCheck, so no client can come back), or at the
//     saved deadline of a connection that had already closed, if
//     earlier. What the client did not re-register is then withdrawn.
//
// A lease the door cannot read is dropped and its records withdrawn.
func (s *Server) restoreLeases() {
	now := time.Now()
	var conns []restoredConn
	var orphans []string
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for _, l := range s.reg.RestoredLeases(door) {
		var st holdState
		err := json.Unmarshal(l.State, &st)
		recs := l.Records(s.table)
		h := holder(l.ID)
		ok := err == nil && len(recs) > 0 &&
			(st.Kind == kindGRPC && strings.HasPrefix(l.ID, "grpc:") ||
				st.Kind == kindBeat && st.Identity != "" && beatHolder(st.Identity) == h && len(recs) == 1)
		if !ok {
			s.log.Warn("withdrawing the instances of an unreadable saved Nacos holder", "lease", l.ID, "kind", st.Kind, "records", len(recs), "err", err)
			s.reg.DropLease(door, l.ID)
			for _, r := range recs {
				orphans = append(orphans, r.Key())
			}
			continue
		}
		hd := &holding{recs: map[string]routes.Record{}, deadline: l.Deadline, renewed: l.Renewed, state: st}
		s.mu.Lock()
		for _, r := range recs {
			k := r.Key()
			hd.recs[k] = r
			if s.holders[k] == nil {
				s.holders[k] = map[holder]struct{}{}
			}
			s.holders[k][h] = struct{}{}
		}
		s.held[h] = hd
		if st.Kind == kindBeat {
			s.beats[st.Identity] = restoredBeat(st.Identity, recs[0], later(l.Deadline, now.Add(s.cfg.Grace+BeatInterval))) // beats.go
		}
		s.mu.Unlock()
		if st.Kind == kindGRPC {
			left := s.cfg.Grace
			if !l.Deadline.IsZero() {
				left = min(left, max(l.Deadline.Sub(now), 0))
			}
			conns = append(conns, restoredConn{h: h, left: left})
		}
		s.log.Info("Nacos holder resumed from before the restart", "holder", l.ID, "instances", len(recs))
	}
	if len(orphans) > 0 {
		s.reg.Apply(nil, orphans)
	}
	if len(conns) > 0 {
		s.wg.Go(func() { s.expireRestored(conns) })
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// restoredConn is the holder of a gRPC connection from before a restart,
// and how long after the agent is ready it lets go.
type restoredConn struct {
	h    holder
	left time.Duration
	at   time.Time
}

// expireRestored lets the restored connections' holders go once their
// time has passed, counted from when the agent is ready.
func (s *Server) expireRestored(conns []restoredConn) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !s.reg.Ready() {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
	}
	ready := time.Now()
	s.writeMu.Lock()
	for i := range conns {
		conns[i].at = ready.Add(conns[i].left)
		// Saved, so that another restart meanwhile withdraws no later.
		if err := s.renew(conns[i].h, conns[i].at); err != nil {
			s.log.Warn("saving a restored connection's deadline failed", "holder", conns[i].h, "err", err)
		}
	}
	s.writeMu.Unlock()
	for len(conns) > 0 {
		slices.SortFunc(conns, func(a, b restoredConn) int { return a.at.Compare(b.at) })
		t := time.NewTimer(time.Until(conns[0].at))
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.writeMu.Lock()
		_, err := s.letGo(conns[0].h, true)
		s.writeMu.Unlock()
		if err != nil {
			s.log.Error("withdrawing a restored connection's instances failed: the data dir cannot save it; retrying", "holder", conns[0].h, "err", err)
			conns[0].at = time.Now().Add(time.Second)
			continue
		}
		s.log.Info("a Nacos connection from before the restart did not come back within the grace: what no client re-registered is withdrawn", "holder", conns[0].h)
		conns = conns[1:]
	}
}
