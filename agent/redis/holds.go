package redis

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/redis/resp"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// door names the door's leases (package lease) and its holds on the host.
const door = "redis"

// A field written with HSET is held by the door until its expiry passes
// unrenewed or a client deletes it: one lease per field (its ID the
// record's key, its Deadline the expiry), so that it outlives the
// connection that wrote it (Dubbo's provider renews it on any pooled
// connection) and the agent's restart, and goes at its expiry without
// Dubbo's admin process. A dynamic=false URL is a rule instead
// (cluster-scoped, with no expiry), as every door writes it.
type holds struct {
	writeMu sync.Mutex // one write command at a time
	mu      sync.Mutex // guards held
	held    map[string]*field
}

// field is one URL this door holds.
type field struct {
	rec    routes.Record
	expiry int64 // epoch ms, as written
}

func (h *holds) init() { h.held = map[string]*field{} }

func (s *Server) heldValue(key string) (string, bool) {
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	if f := s.held[key]; f != nil {
		return strconv.FormatInt(f.expiry, 10), true
	}
	return "", false
}

func leaseOf(key string, expiry int64) lease.Lease {
	return lease.Lease{Door: door, ID: key, Keys: []string{key}, Deadline: time.UnixMilli(expiry), Renewed: time.Now()}
}

// errNotDubbo refuses a write the registry cannot hold.
func errNotDubbo(key string, field []byte) string {
	if _, _, ok := parseKey(key); !ok {
		return fmt.Sprintf("ERR namecast holds Dubbo's registry only: a key is %s{interface}/{category} (got '%s')", root, trunc([]byte(key), 128))
	}
	if _, err := dubbo.Parse(string(field)); err != nil {
		// the cause (a port out of range, a URL past its bound), as the
		// HTTP door names it
		return fmt.Sprintf("ERR namecast holds Dubbo's registry only: a field of %s is the full URL of one of its %s: %v", key, lastPart(key), err)
	}
	return fmt.Sprintf("ERR namecast holds Dubbo's registry only: a field of %s is the full URL of one of its %s, of that interface and category (got '%s')", key, lastPart(key), trunc(field, 128))
}

func lastPart(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}

// writeError is the reply to a write the host refused: past the record
// budget Redis' OOM (its answer past maxmemory) naming the limit, else
// the cause.
func writeError(err error) string {
	if errors.Is(err, routes.ErrBudget) {
		return "OOM command not allowed: " + err.Error()
	}
	return "ERR namecast could not save the change: " + err.Error()
}

// cmdHSet is HSET key field value [field value ...]: each field a URL of
// the key's interface and category, each value its expiry in epoch ms.
// The reply counts the fields that were not in the hash, as Redis counts
// them (Dubbo publishes "register" on a renewal only when it is 1).
func cmdHSet(s *Server, c *conn, args [][]byte, b []byte) []byte {
	if len(args)%2 == 1 {
		return resp.Err(b, wrongArgs("hset"))
	}
	key := string(args[1])
	type put struct {
		rk     string
		u      dubbo.URL
		expiry int64
	}
	var puts []put
	for i := 2; i < len(args); i += 2 {
		rk, u, ok := fieldKey(key, args[i])
		if !ok {
			return resp.Err(b, errNotDubbo(key, args[i]))
		}
		ms, ok := parseInt(args[i+1])
		if !ok {
			return resp.Err(b, fmt.Sprintf("ERR namecast holds Dubbo's registry only: a field's value is its expiry in epoch milliseconds (got '%s')", trunc(args[i+1], 64)))
		}
		puts = append(puts, put{rk, u, ms})
	}
	iface, category, _ := parseKey(key)
	s.writeMu.Lock()
	before := s.fieldsOf(key)
	added := map[string]bool{}
	var rules, recs []routes.Record
	var ws []lease.Write
	var renewals []lease.Lease
	news := map[string]*field{}
	for _, p := range puts {
		full := p.u.String()
		if !containsSorted(before, full) {
			added[full] = true
		}
		rec := routes.Record{URL: &routes.URL{Interface: iface, Category: category, URL: full}}
		if !p.u.Dynamic() {
			rules = append(rules, rec)
			continue
		}
		s.holds.mu.Lock()
		f := s.held[p.rk]
		s.holds.mu.Unlock()
		if f != nil && !added[full] {
			renewals = append(renewals, leaseOf(p.rk, p.expiry))
			continue
		}
		ws = append(ws, lease.Write{Lease: leaseOf(p.rk, p.expiry), Puts: []routes.Record{rec}})
		recs = append(recs, rec)
		news[p.rk] = &field{rec: rec, expiry: p.expiry}
	}
	if len(rules) > 0 {
		s.mute(rules, nil)
		_, err := s.host.ApplyRules(rules, nil)
		s.unmute(rules, nil)
		if err != nil {
			s.writeMu.Unlock()
			return resp.Err(b, writeError(err))
		}
	}
	var renewErr error
	for _, l := range renewals {
		if err := s.host.PutLease(l); err != nil {
			renewErr = err
			continue
		}
		s.holds.mu.Lock()
		if f := s.held[l.ID]; f != nil {
			f.expiry = l.Deadline.UnixMilli()
		}
		s.holds.mu.Unlock()
	}
	if len(ws) == 0 {
		s.writeMu.Unlock()
	} else {
		unlocked := false
		s.mute(recs, nil)
		err := s.host.Write(func() {
			s.holds.mu.Lock()
			maps.Copy(s.held, news)
			s.holds.mu.Unlock()
			s.unmute(recs, nil)
			s.writeMu.Unlock()
			unlocked = true
		}, ws...)
		if !unlocked { // refused before anything changed
			s.unmute(recs, nil)
			s.writeMu.Unlock()
		}
		if err != nil {
			return resp.Err(b, writeError(err))
		}
	}
	if renewErr != nil {
		return resp.Err(b, writeError(renewErr))
	}
	return resp.Int(b, int64(len(added)))
}

func containsSorted(ss []string, s string) bool {
	_, ok := slices.BinarySearch(ss, s)
	return ok
}

// cmdHDel is HDEL key field [field ...]: it lets go of the fields this
// door holds (a URL another door or agent holds stays, and is not
// counted) and deletes dynamic=false URLs, which are rules.
func cmdHDel(s *Server, c *conn, args [][]byte, b []byte) []byte {
	n, err := s.letGo(string(args[1]), args[2:])
	if err != nil {
		return resp.Err(b, writeError(err))
	}
	return resp.Int(b, int64(n))
}

// cmdDel is DEL key [key ...]: HDEL of every field of each key; it counts
// the keys of which a field went.
func cmdDel(s *Server, c *conn, args [][]byte, b []byte) []byte {
	n := 0
	for _, k := range args[1:] {
		key := string(k)
		var fields [][]byte
		for _, f := range s.fieldsOf(key) {
			fields = append(fields, []byte(f))
		}
		if len(fields) == 0 {
			continue
		}
		gone, err := s.letGo(key, fields)
		if err != nil {
			return resp.Err(b, writeError(err))
		}
		if gone > 0 {
			n++
		}
	}
	return resp.Int(b, int64(n))
}

// letGo withdraws the fields of key that this door holds or that are
// rules, and counts those that were in the hash; the answer waits until
// the withdrawal is saved.
func (s *Server) letGo(key string, fields [][]byte) (int, error) {
	s.writeMu.Lock()
	present := s.fieldsOf(key)
	var ws []lease.Write
	var dels, ruleDels []string
	n := 0
	seen := map[string]bool{}
	for _, f := range fields {
		rk, u, ok := fieldKey(key, f)
		if !ok || seen[rk] {
			continue
		}
		seen[rk] = true
		if !u.Dynamic() {
			if _, isRule := s.table.Rule(rk); isRule {
				ruleDels = append(ruleDels, rk)
				n++
			}
			continue
		}
		s.holds.mu.Lock()
		held := s.held[rk] != nil
		s.holds.mu.Unlock()
		if !held {
			continue
		}
		ws = append(ws, lease.Write{Lease: lease.Lease{Door: door, ID: rk}, Deletes: []string{rk}, Drop: true})
		dels = append(dels, rk)
		if containsSorted(present, u.String()) {
			n++
		}
	}
	if len(ruleDels) > 0 {
		s.mute(nil, ruleDels)
		_, err := s.host.ApplyRules(nil, ruleDels)
		s.unmute(nil, ruleDels)
		if err != nil {
			s.writeMu.Unlock()
			return 0, err
		}
	}
	if len(ws) == 0 {
		s.writeMu.Unlock()
		return n, nil
	}
	unlocked := false
	s.mute(nil, dels)
	err := s.host.Write(func() {
		s.holds.mu.Lock()
		for _, k := range dels {
			delete(s.held, k)
		}
		s.holds.mu.Unlock()
		s.unmute(nil, dels)
		s.writeMu.Unlock()
		unlocked = true
	}, ws...)
	if !unlocked {
		s.unmute(nil, dels)
		s.writeMu.Unlock()
	}
	return n, err
}

// expire withdraws the fields whose expiry passed unrenewed, which Dubbo
// leaves to an admin process; subscribers hear "unregister" (feed.go).
func (s *Server) expire(now time.Time) {
	ms := now.UnixMilli()
	s.holds.mu.Lock()
	var due []string
	for k, f := range s.held {
		if f.expiry <= ms {
			due = append(due, k)
		}
	}
	s.holds.mu.Unlock()
	if len(due) == 0 {
		return
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	var gone []string
	s.holds.mu.Lock()
	for _, k := range due {
		if f := s.held[k]; f != nil && f.expiry <= ms { // not renewed meanwhile
			delete(s.held, k)
			gone = append(gone, k)
		}
	}
	s.holds.mu.Unlock()
	for _, k := range gone {
		s.host.Forget(door, k)
	}
	s.host.Apply(nil, gone)
	s.counts.expired.Add(uint64(len(gone)))
	s.log.Debug("Redis fields expired unrenewed: withdrawn", "fields", len(gone))
}

// restore takes back the fields held before the agent restarted (their
// records are already republished); each expires at its saved deadline
// unless its client renews it.
func (s *Server) restore() {
	var orphans []string
	for _, l := range s.host.RestoredLeases(door) {
		recs := l.Records(s.table)
		if len(recs) != 1 || recs[0].URL == nil || l.Deadline.IsZero() || recs[0].Key() != l.ID {
			s.log.Warn("withdrawing an unreadable saved Redis field", "lease", l.ID, "records", len(recs))
			s.host.DropLease(door, l.ID)
			for _, r := range recs {
				orphans = append(orphans, r.Key())
			}
			continue
		}
		s.held[l.ID] = &field{rec: recs[0], expiry: l.Deadline.UnixMilli()}
	}
	if len(orphans) > 0 {
		s.host.Apply(nil, orphans)
	}
}
