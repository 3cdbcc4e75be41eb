package zookeeper

import (
	"encoding/base64"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// Deleting another agent's ephemeral node. Only an origin changes its own
// records, so a delete through agent B of a node that a session on agent A
// holds travels as a command, as RocketMQ admin writes do
// (agent/rocketmq/commands.go): a short-lived cluster-scoped KV rule
// addressed to A,
//
//	key   {target agent}/delete/{base64url(record key)}
//	value {issued, unix ms} {the record's stamp}
//
// B hides A's record at once (the delete is answered OK and B's view shows
// it gone) and A, on seeing the rule, withdraws its record if it is still
// the one B deleted (its stamp is not newer: a session that re-created
// the node since keeps it), removes it from the owning session, and
// deletes the rule. Every agent then sees the record go by gossip, and the
// session's watchers on A get NodeDeleted. This is what ZooKeeper does,
// where any session may delete another's ephemeral node, and what Dubbo's
// recovery paths need: its fault-tolerant create deletes and re-creates on
// NODEEXISTS (the re-create is stamped after the record it replaced, so it
// wins everywhere even before A's withdrawal arrives), and a recursive
// delete of a subtree removes every session's nodes in it.
//
// A command whose target no longer holds records anywhere is deleted by
// any agent that has seen it, unchanged, for commandTTL on its own clock;
// the issued time is never compared with another host's clock.
const (
	cmdNamespace = "~namecast.zk"
	cmdDelete    = "delete"
	commandTTL   = 10 * time.Minute
)

// remoteHold is another agent's session-held record at a path being
// deleted here.
type remoteHold struct {
	origin, key string
	stamp       uint64
}

// suppression hides another agent's record at a key from this agent's
// view, after a delete here asked that agent to withdraw it: records of
// that origin stamped at or before stamp. It lapses once the origin's
// record goes or is replaced by a newer one.
type suppression struct {
	origin string
	stamp  uint64
}

// commandsFor are the withdrawal commands addressed to the agent of each
// of holds.
func commandsFor(holds []remoteHold) []routes.Record {
	issued := strconv.FormatInt(time.Now().UnixMilli(), 10)
	puts := make([]routes.Record, 0, len(holds))
	for _, h := range holds {
		puts = append(puts, routes.Record{KV: &routes.KV{Namespace: cmdNamespace,
			Key: cmdKey(h.origin, h.key), Value: issued + " " + strconv.FormatUint(h.stamp, 10)}})
	}
	return puts
}

// suppress hides the records of holds here, once their commands are
// written. s.mu held.
func (s *Server) suppress(holds []remoteHold) {
	for _, h := range holds {
		s.suppressed[h.key] = append(s.suppressed[h.key], suppression{h.origin, h.stamp})
	}
}

func cmdKey(target, recKey string) string {
	return target + "/" + cmdDelete + "/" + base64.RawURLEncoding.EncodeToString([]byte(recKey))
}

// parseCmdKey reads a command key; the target is a node name and may hold
// '/', the op and the encoded key never do.
func parseCmdKey(k string) (target, recKey string, ok bool) {
	rest, enc, ok1 := cutLast(k)
	target, op, ok2 := cutLast(rest)
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok1 || !ok2 || op != cmdDelete || err != nil || target == "" {
		return "", "", false
	}
	return target, string(b), true
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// runCommands runs the commands addressed to this agent, and collects
// those of gone targets seen unchanged for commandTTL. Called when a
// command arrives and at every housekeeping check.
func (s *Server) runCommands() {
	s.cmdMu.Lock()
	defer s.cmdMu.Unlock()
	present := map[string]bool{}
	for _, o := range s.table.Origins() {
		present[o] = true
	}
	now := time.Now()
	seen := make(map[string]seenCommand, len(s.cmdSeen))
	var done []string
	for key, val := range s.table.KVs(cmdNamespace) {
		target, recKey, ok := parseCmdKey(key)
		_, stampText, _ := strings.Cut(val, " ")
		stamp, err := strconv.ParseUint(stampText, 10, 64)
		first := s.cmdSeen[key]
		if first.value != val {
			first = seenCommand{value: val, since: now}
		}
		seen[key] = first
		switch {
		case !ok || err != nil:
			s.log.Warn("dropping a malformed ZooKeeper delete command", "key", key, "value", val)
			done = append(done, key)
		case target == s.local:
			if s.withdrawForPeer(recKey, stamp) {
				done = append(done, key)
			}
		case !present[target] && now.Sub(first.since) > commandTTL:
			done = append(done, key)
		}
	}
	s.cmdSeen = seen
	if len(done) == 0 {
		return
	}
	keys := make([]string, len(done))
	for i, k := range done {
		keys[i] = routes.KVKey(cmdNamespace, k)
	}
	s.applyRules(nil, keys) // logs a failure; the next run retries
}

// seenCommand is when this agent first saw a command (key and value), on
// its own clock.
type seenCommand struct {
	value string
	since time.Time
}

// withdrawForPeer withdraws this agent's record at key, deleted through
// another agent, unless a newer write replaced it since. Its session's
// lease is saved without it first; false (the command stays, and runs
// again) when that cannot be saved.
func (s *Server) withdrawForPeer(key string, stamp uint64) bool {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	rec, ok := s.table.LocalRecord(key)
	sid := s.owners[key]
	if !ok || recordStamp(rec) > stamp || sid == 0 {
		s.mu.Unlock()
		return true
	}
	var sv lease.Saving
	if ss := s.sessions[sid]; ss != nil && !ss.ended {
		keys := maps.Clone(ss.keys)
		delete(keys, key)
		var err error
		if sv, err = s.saveKeysLocked(ss, keys, nil); err != nil {
			s.mu.Unlock()
			s.log.Error("an ephemeral znode deleted through another agent stays: its removal could not be saved to the data dir; tried again later",
				"key", key, "session", hexID(sid), "err", err)
			return false
		}
	}
	delete(s.owners, key)
	if h := s.hidden[key]; h != nil {
		h.timer.Stop()
		delete(s.hidden, key)
	}
	s.mu.Unlock()
	s.log.Info("withdrew an ephemeral znode deleted through another agent", "key", key, "session", hexID(sid))
	s.reg.Apply(nil, []string{key})
	s.syncDirty()
	if err := sv.Wait(); err != nil {
		// Withdrawn, and saved with the next snapshot (lease.Saving).
		s.log.Error("the withdrawal of an ephemeral znode deleted through another agent is not on disk yet", "key", key, "err", err)
	}
	return true
}

func recordStamp(r routes.Record) uint64 {
	st, _ := stampOwner(r)
	return st
}
