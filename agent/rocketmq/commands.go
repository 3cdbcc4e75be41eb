package rocketmq

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/routes"
)

// Commands carry admin writes (wipe/add write perm, delete topic) to the
// agent that owns the records, since only an origin may change its records.
// A command is a cluster-scoped KV rule in a reserved namespace:
//
//	key   {target agent}/{op}/{broker name or topic}
//	value {issued, unix ms} {parameter}
//
// Rules replicate to every agent; the target applies the command to its own
// records and deletes the rule. One key per (target, op, subject) means a
// later command replaces an earlier one not yet run (a wipe then an add
// leaves the add).
//
// A command whose target is gone (no agent of that name holds records) is
// deleted by any agent that has seen it, unchanged, for commandTTL on its
// own clock. The issued time in the value is never compared with another
// host's clock: with skew that would delete a wipe its target was about to
// run, after mqadmin was told it succeeded. While the target is alive
// nothing deletes its command but the target, once it has run it.
const (
	cmdNamespace = "~namecast.cmd"
	commandTTL   = 10 * time.Minute
	// commandPoll spaces the scans: the table changes with every
	// registration anywhere, commands are rare.
	commandPoll = 50 * time.Millisecond

	opPerm        = "perm"
	opDeleteTopic = "deltopic"
	permWipe      = "wipe"
	permAdd       = "add"
)

// sendCommands addresses one command to each of targets but this agent.
func (s *Server) sendCommands(targets []string, op, subject, param string) {
	self := s.reg.Table().Local()
	issued := strconv.FormatInt(time.Now().UnixMilli(), 10)
	var puts []routes.Record
	seen := map[string]bool{self: true}
	for _, t := range targets {
		if seen[t] {
			continue
		}
		seen[t] = true
		puts = append(puts, routes.Record{KV: &routes.KV{Namespace: cmdNamespace,
			Key: t + "/" + op + "/" + subject, Value: issued + " " + param}})
	}
	if len(puts) > 0 {
		s.reg.ApplyRules(puts, nil)
	}
}

// sendCommandsFor addresses a command to every agent holding a record of
// a group in bds: a broker registered on several agents has records on
// each, and BrokerData.Origins names one per id.
func (s *Server) sendCommandsFor(bds []routes.BrokerData, op, subject, param string) {
	var targets []string
	for _, bd := range bds {
		targets = append(targets, s.reg.Table().BrokerHolders(bd.BrokerName)...)
	}
	s.sendCommands(targets, op, subject, param)
}

// commandWake bounds how long the loop waits for a table change, so that
// commands of a gone target are collected in a quiet cluster too.
const commandWake = time.Minute

func (s *Server) commandLoop() {
	table := s.reg.Table()
	var index uint64
	for {
		ctx, cancel := context.WithTimeout(s.ctx, commandWake)
		index = table.Wait(ctx, index)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		s.runCommands()
		s.syncGroups()
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(commandPoll):
		}
	}
}

// seenCommand is when this agent first saw a command (key and value), on
// its own clock.
type seenCommand struct {
	value string
	since time.Time
}

// runCommands runs the commands addressed to this agent and deletes them,
// with any command of a gone target this agent has seen for commandTTL.
func (s *Server) runCommands() {
	s.cmdMu.Lock()
	defer s.cmdMu.Unlock()
	table := s.reg.Table()
	self := table.Local()
	now := s.now()
	present := map[string]bool{}
	for _, o := range table.Origins() {
		present[o] = true
	}
	seen := make(map[string]seenCommand, len(s.cmdSeen))
	var done []string
	for key, val := range table.KVs(cmdNamespace) {
		// The target is a node name and may hold '/'; op and subject never do.
		rest, subject, ok1 := cutLast(key)
		target, op, ok2 := cutLast(rest)
		issuedText, param, _ := strings.Cut(val, " ")
		_, err := strconv.ParseInt(issuedText, 10, 64)
		first := s.cmdSeen[key]
		if first.value != val {
			first = seenCommand{value: val, since: now}
		}
		seen[key] = first
		switch {
		case !ok1 || !ok2 || err != nil:
			done = append(done, key)
		case target == self:
			s.runCommand(op, subject, param)
			done = append(done, key)
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
	s.reg.ApplyRules(nil, keys)
}

func (s *Server) runCommand(op, subject, param string) {
	switch op {
	case opPerm:
		n := s.changeWritePermLocal(subject, param == permWipe)
		s.log.Info("applied a write-permission change sent from another agent", "broker", subject, "change", param, "topics", n)
	case opDeleteTopic:
		n := s.deleteTopicLocal(subject, param)
		s.log.Info("deleted a topic as asked by another agent", "topic", subject, "cluster", param, "brokers", n)
	default:
		s.log.Warn("ignoring an unknown command (is a newer agent in the cluster?)", "op", op, "subject", subject)
	}
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}
