package zookeeper

import (
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	"github.com/namecast/namecast/agent/command"
	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/routes"
)

// Deleting another agent's ephemeral node. Only an origin changes its own
// records, so a delete through agent B of a node that a session on agent A
// holds travels as a command (package command), as RocketMQ admin writes
// do: a short-lived cluster-scoped KV rule addressed to A,
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
// A record deleted so that lost a create race to the deleting agent's
// view of the path (conflicts.go) travels as op "lost" instead: its
// agent expires the owning session rather than quietly withdrawing the
// node, so a loser hears it lost even when the winner's node came and
// went before its agent saw it.
const (
	cmdNamespace = "~namecast.zk"
	cmdDelete    = "delete"
	cmdLost      = "lost"
	commandTTL   = 10 * time.Minute
)

// remoteHold is another agent's session-held record at a path being
// deleted here.
type remoteHold struct {
	origin, key string
	stamp       uint64
	lost        bool // hidden under a record that did not replace it (cmdLost)
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
	now := time.Now()
	puts := make([]routes.Record, 0, len(holds))
	for _, h := range holds {
		puts = append(puts, deleteCommand(h.origin, h.key, h.stamp, h.lost, now))
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

// deleteCommand asks target to withdraw its record at recKey if it is
// still the one stamped stamp, or, lost, to expire its session.
func deleteCommand(target, recKey string, stamp uint64, lost bool, now time.Time) routes.Record {
	op := cmdDelete
	if lost {
		op = cmdLost
	}
	return command.Rule(cmdNamespace, target, op, base64.RawURLEncoding.EncodeToString([]byte(recKey)),
		strconv.FormatUint(stamp, 10), now)
}

// parseDelete reads a delete command: the record key, the stamp and
// whether the record lost a conflict.
func parseDelete(c command.Command) (recKey string, stamp uint64, lost, ok bool) {
	b, err1 := base64.RawURLEncoding.DecodeString(c.Subject)
	stamp, err2 := strconv.ParseUint(c.Param, 10, 64)
	return string(b), stamp, c.Op == cmdLost, (c.Op == cmdDelete || c.Op == cmdLost) && err1 == nil && err2 == nil
}

// newInbox reads the delete commands other agents leave this one.
func (s *Server) newInbox() *command.Inbox {
	return &command.Inbox{Namespace: cmdNamespace, TTL: commandTTL,
		Valid: func(c command.Command) bool { _, _, _, ok := parseDelete(c); return ok },
		Dropped: func(key, val string) {
			s.log.Warn("dropping a malformed ZooKeeper delete command", "key", key, "value", val)
		},
		Run: func(c command.Command) bool {
			recKey, stamp, lost, _ := parseDelete(c)
			return s.withdrawForPeer(recKey, stamp, lost)
		},
		Remove: func(keys []string) { s.applyRules(nil, keys) }, // logs a failure; the next run retries
	}
}

// runCommands runs the commands addressed to this agent, and collects
// those of gone targets seen unchanged for commandTTL. Called when a
// command arrives and at every housekeeping check.
func (s *Server) runCommands() { s.commands.Collect(s.table, time.Now()) }

// withdrawForPeer withdraws this agent's record at key, deleted through
// another agent, unless a newer write replaced it since; lost, the
// record lost a create race there, and its session is expired instead
// (which withdraws it). Its session's lease is saved without it first;
// false (the command stays, and runs again) when that cannot be saved.
func (s *Server) withdrawForPeer(key string, stamp uint64, lost bool) bool {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if p, ok := routes.ZnodePathOfKey(key); ok {
		// A session that lost a create race to the deleting agent's
		// record is expired, not quietly stripped of its node.
		s.checkCreateLost(p, key)
	}
	rec, ok := s.table.LocalRecord(key)
	sid := s.owners[key]
	if ss := s.sessions[sid]; ss != nil && ss.lost {
		s.mu.Unlock()
		return true // its expiry withdraws the record
	}
	if !ok || recordStamp(rec) > stamp || sid == 0 {
		s.mu.Unlock()
		return true
	}
	if ss := s.sessions[sid]; lost && ss != nil && !ss.ended {
		p, _ := routes.ZnodePathOfKey(key)
		s.lose(ss, "create", p, "")
		s.mu.Unlock()
		return true
	}
	forget := func() {
		delete(s.owners, key)
		if h := s.hidden[key]; h != nil {
			h.timer.Stop()
			delete(s.hidden, key)
		}
		s.mu.Unlock()
	}
	if ss := s.sessions[sid]; ss != nil && !ss.ended {
		w := s.sessionWrite(ss, nil, []string{key})
		err := s.reg.Write(func() { s.noteWriteLocked(ss, w); forget() }, w)
		if err != nil && !errors.Is(err, host.ErrUnsaved) {
			s.mu.Unlock()
			s.log.Error("an ephemeral znode deleted through another agent stays: its removal could not be saved to the data dir; tried again later",
				"key", key, "session", hexID(sid), "err", err)
			return false
		}
		if err != nil {
			// Withdrawn, and saved with the next snapshot (lease.Saving).
			s.log.Error("the withdrawal of an ephemeral znode deleted through another agent is not on disk yet", "key", key, "err", err)
		}
	} else {
		forget()
		s.reg.Apply(nil, []string{key})
	}
	s.log.Info("withdrew an ephemeral znode deleted through another agent", "key", key, "session", hexID(sid))
	s.syncDirty()
	return true
}

func recordStamp(r routes.Record) uint64 {
	st, _ := stampOwner(r)
	return st
}
