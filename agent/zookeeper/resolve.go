package zookeeper

import (
	"sort"
	"strings"

	"github.com/namecast/namecast/routes"
)

// resolve reads what the table holds at path p. Local records whose delete
// is being held (DeleteHold) are already gone from this agent's view. s.mu
// held.
func (s *Server) resolve(p string) content {
	if rec, _, ok := urlOfPath(p); ok {
		return s.resolveURL(routes.URLKey(rec.Interface, rec.Category, rec.URL))
	}
	held := s.visible(routes.ZnodeKey(p, ""), s.table.Holders(routes.ZnodeKey(p, "")))
	if isSetPath(p) {
		held = append(held, s.table.RulesWithPrefix(routes.ZnodePartsPrefix(p))...)
	}
	if len(held) == 0 {
		return content{}
	}
	if isSetPath(p) && len(held) > 1 {
		return mergeSet(held)
	}
	h := pick(held)
	z := h.Rec.Znode
	return content{explicit: true, data: z.Data, version: z.Version, ctime: z.Ctime, mtime: z.Mtime,
		owner: z.Owner, persisted: h.Origin == routes.RulesOrigin, container: z.Container}
}

func (s *Server) resolveURL(key string) content {
	held := s.visible(key, s.table.Holders(key))
	if len(held) == 0 {
		return content{}
	}
	h := pick(held)
	u := h.Rec.URL
	c := content{explicit: true, url: true, data: []byte(u.Data), owner: u.Owner, shown: u.Path}
	switch {
	case h.Origin == routes.RulesOrigin:
		c.persisted, c.owner = true, 0
	case c.owner != 0:
	case h.Origin == s.local && s.owners[key] != 0:
		c.owner = s.owners[key] // written before URL records carried their owner
	default:
		c.owner = routes.OriginOwner(h.Origin) // registered over HTTP: no session
	}
	return c
}

// visible drops our own record at key while its delete is held, and
// other agents' records deleted through this agent until their agents
// withdraw them (commands.go). s.mu held.
func (s *Server) visible(key string, held []routes.Held) []routes.Held {
	_, hid := s.hidden[key]
	sup := s.suppressed[key]
	if !hid && sup == nil {
		return held
	}
	out := held[:0]
	var live []suppression
	for _, h := range held {
		if h.Origin == s.local && hid {
			continue
		}
		hiddenHere := false
		for _, x := range sup {
			if x.origin == h.Origin && recordStamp(h.Rec) <= x.stamp {
				hiddenHere = true
				live = append(live, x)
			}
		}
		if !hiddenHere {
			out = append(out, h)
		}
	}
	// A suppression lapses once its origin's record went or was replaced.
	if len(live) == 0 {
		delete(s.suppressed, key)
	} else {
		s.suppressed[key] = live
	}
	return out
}

// pick chooses the record a path shows when several hold it, the same on
// every agent that holds the same records: the rule (a persistent node),
// else the latest write by the table's Lamport stamps (two sessions on two
// agents that created one ephemeral path before either saw the other's:
// the one stamped later was written by an agent that had seen more), then
// the higher owner session id, then the origin name, so that equal stamps
// (records of older agents, URLs registered over HTTP) still order alike
// everywhere. Wall clocks play no part, and no agent prefers its own.
func pick(held []routes.Held) routes.Held {
	best := held[0]
	for _, h := range held[1:] {
		if outranks(h, best) {
			best = h
		}
	}
	return best
}

func outranks(a, b routes.Held) bool {
	if ar, br := a.Origin == routes.RulesOrigin, b.Origin == routes.RulesOrigin; ar != br {
		return ar
	}
	as, ao := stampOwner(a.Rec)
	bs, bo := stampOwner(b.Rec)
	switch {
	case as != bs:
		return as > bs
	case ao != bo:
		return ao > bo
	}
	return a.Origin < b.Origin
}

func stampOwner(r routes.Record) (uint64, int64) {
	switch {
	case r.URL != nil:
		return r.URL.Stamp, r.URL.Owner
	case r.Znode != nil:
		return r.Znode.Stamp, r.Znode.Owner
	}
	return 0, 0
}

// mergeSet merges the parts of a service-name mapping: the union of their
// comma-separated names, sorted, with the highest version (spec §5.3).
func mergeSet(held []routes.Held) content {
	names := map[string]bool{}
	c := content{explicit: true, persisted: true}
	for _, h := range held {
		z := h.Rec.Znode
		for _, n := range strings.Split(string(z.Data), ",") {
			if n = strings.TrimSpace(n); n != "" {
				names[n] = true
			}
		}
		c.version = max(c.version, z.Version)
		c.mtime = max(c.mtime, z.Mtime)
		if c.ctime == 0 || z.Ctime < c.ctime {
			c.ctime = z.Ctime
		}
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	c.data = []byte(strings.Join(list, ","))
	return c
}
