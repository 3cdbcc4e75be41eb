package multicast

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// door names the door's leases: one per registration, by record key,
// without deadline (the liveness check withdraws, not a timer).
const door = "multicast"

// holding is one registration the door holds for a process of its host.
type holding struct {
	url  dubbo.URL
	from netip.Addr // who sent it, for the per-sender bound
}

// leaseState is a lease's State: who sent the registration.
type leaseState struct {
	From string `json:"from"`
}

// errRecord: a URL the registry cannot hold (no service, no host).
var errRecord = errors.New("not a registration")

// record is u's record, checked as every door checks a URL it is given.
func record(u dubbo.URL) (routes.URL, error) {
	rec := routes.URL{Interface: u.Interface(), Category: u.Category(), URL: u.String()}
	for _, c := range []struct{ what, s string }{{"interface", rec.Interface}, {"category", rec.Category}} {
		if c.s == "" || len(c.s) > 255 || c.s == dubbo.Any || strings.ContainsAny(c.s, "/,") || strings.ContainsFunc(c.s, isControl) {
			return routes.URL{}, fmt.Errorf("%w: %s %q of %s must name one %s (1-255 characters, no '/', ',' or '*')", errRecord, c.what, c.s, clip(rec.URL), c.what)
		}
	}
	if u.Dynamic() && u.Host() == "" {
		return routes.URL{}, fmt.Errorf("%w: %s names no host", errRecord, clip(rec.URL))
	}
	return rec, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// register holds u for a process of this host. A dynamic=false URL (a
// rule) is cluster-scoped, as through every door, and not held.
func (s *Server) register(u dubbo.URL, from netip.Addr) {
	rec, err := record(u)
	if err != nil {
		s.bad(netip.AddrPortFrom(from, 0), err)
		return
	}
	puts := []routes.Record{{URL: &rec}}
	if !u.Dynamic() {
		if _, err := s.host.ApplyRules(puts, nil); err != nil {
			s.refused("rules", u, err)
		}
		return
	}
	key := routes.URLKey(rec.Interface, rec.Category, rec.URL)
	s.mu.Lock()
	h := s.held[key]
	if h == nil && s.bySender[from] >= s.cfg.MaxPerSender {
		s.mu.Unlock()
		s.refused("sender", u, fmt.Errorf("%s holds %d registrations, the most one address may (multicast_max_per_sender)", from, s.cfg.MaxPerSender))
		return
	}
	l := lease.Lease{Door: door, ID: key, Renewed: time.Now()} // a nil State keeps the saved one
	if h == nil || h.from != from {
		l.State, _ = json.Marshal(leaseState{From: from.String()})
	}
	err = s.host.Write(func() {
		if h == nil {
			s.held[key] = &holding{url: u, from: from}
			s.bySender[from]++
		} else if h.from != from {
			s.bySender[h.from]--
			s.bySender[from]++
			h.from = from
		}
		s.stats.gauge("held", len(s.held))
		s.mu.Unlock()
	}, lease.Write{Lease: l, Puts: puts})
	switch {
	case errors.Is(err, host.ErrUnsaved):
		s.refused("unsaved", u, err)
	case err != nil: // nothing changed, and s.mu is still held
		s.mu.Unlock()
		s.refused(reason(err), u, err)
	}
}

// unregister withdraws u if the door holds it (Dubbo ignores an
// unregister of what it never had); a rule is deleted.
func (s *Server) unregister(u dubbo.URL) {
	rec, err := record(u)
	if err != nil {
		return // never held
	}
	if !u.Dynamic() {
		if _, err := s.host.ApplyRules(nil, []string{routes.URLKey(rec.Interface, rec.Category, rec.URL)}); err != nil {
			s.refused("rules", u, err)
		}
		return
	}
	s.withdraw(routes.URLKey(rec.Interface, rec.Category, rec.URL), "")
}

// withdraw withdraws the registration at key, its lease's removal
// written first; want, when set, is the URL it must still be (the
// liveness check's). It reports whether it withdrew.
func (s *Server) withdraw(key, want string) bool {
	s.mu.Lock()
	h := s.held[key]
	if h == nil || want != "" && h.url.String() != want {
		s.mu.Unlock()
		return false
	}
	err := s.host.Write(func() {
		delete(s.held, key)
		if s.bySender[h.from]--; s.bySender[h.from] <= 0 {
			delete(s.bySender, h.from)
		}
		s.stats.gauge("held", len(s.held))
		s.mu.Unlock()
	}, lease.Write{Lease: lease.Lease{Door: door, ID: key}, Deletes: []string{key}, Drop: true})
	switch {
	case errors.Is(err, host.ErrUnsaved):
		s.log.Warn("multicast door: a withdrawal is not on disk yet", "url", clip(h.url.String()), "err", err)
	case err != nil: // the removal could not be written: nothing is withdrawn
		s.mu.Unlock()
		s.refused("unsaved", h.url, err)
		return false
	}
	return true
}

// restore takes back the registrations held before a restart: their
// records are republished; the liveness check confirms them.
func (s *Server) restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.host.RestoredLeases(door) {
		rec, ok := s.table.LocalRecord(l.ID)
		var u dubbo.URL
		var err error
		if ok && rec.URL != nil {
			u, err = dubbo.Parse(rec.URL.URL)
		}
		if !ok || rec.URL == nil || err != nil {
			s.host.DropLease(door, l.ID)
			continue
		}
		var st leaseState
		json.Unmarshal(l.State, &st)
		from, _ := netip.ParseAddr(st.From)
		s.held[l.ID] = &holding{url: u, from: from}
		s.bySender[from]++
	}
	s.stats.gauge("held", len(s.held))
}

// reason names a refusal for metrics: the record budget, or the disk.
func reason(err error) string {
	if errors.Is(err, routes.ErrBudget) {
		return "budget"
	}
	return "unsaved"
}

// refused counts a registration the door could not take and says why, at
// most once a while: multicast has no answer to carry an error, so the
// log and namecast_multicast_refused are where it shows.
func (s *Server) refused(why string, u dubbo.URL, err error) {
	s.stats.incr("refused", "why", why)
	if s.refusedLog.Allow() {
		s.log.Warn("multicast door: a registration was refused (counted in namecast_multicast_refused; said at most every 10 s)",
			"why", why, "url", clip(u.String()), "err", err)
	}
}

// holds reports whether the door holds key now.
func (s *Server) holds(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[key] != nil
}
